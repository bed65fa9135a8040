"""The one place that imports benepar (0.2.0), and why it needs help to.

benepar's `parse_chart` and `retokenization` modules run `import transformers` at the top, but
use it only for a pre-trained subword encoder (`hparams.use_pretrained`). Our parser reads
characters (`use_chars_lstm`) and never takes that path. The `full` extra installs benepar with
its requirements, transformers among them; benepar installed without them (`pip install
--no-deps benepar==0.2.0 torch-struct==0.5`, beside PyTorch) works as well. When
transformers is absent, a stand-in module is placed in `sys.modules` only while benepar's modules
import, then removed: other code that imports transformers later still gets an ImportError, and
a checkpoint that does ask for a pre-trained encoder fails with a message saying why.

benepar 0.2.0, the release on PyPI, does not import `tokenizations` (pytokenizations, which has
no wheel here), so no stand-in is needed for it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types
from typing import Any

__all__ = ["import_benepar"]


class _NoPretrained:
    """Stands in for transformers' Auto* classes; any use says what is missing."""

    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any):
        raise ImportError(
            "this benepar model needs a pre-trained encoder from `transformers`, which is not "
            "installed; our checkpoints use the character LSTM and do not need it"
        )

    from_config = from_pretrained


def _stand_in() -> types.ModuleType:
    module = types.ModuleType("transformers")
    module.__doc__ = "Stand-in used while benepar imports; see features/_benepar_compat.py."
    module.AutoConfig = module.AutoModel = module.AutoTokenizer = _NoPretrained
    return module


@functools.cache
def import_benepar() -> types.SimpleNamespace:
    """benepar's modules we use: `parse_chart`, `decode_chart`, `char_lstm`, `nkutil`,
    `parse_base`, `ptb_unescape`, `subbatching`, and `torch_struct`; a ModelLoadError naming the
    `full` extra when benepar, torch-struct or PyTorch is not installed."""
    names = ("parse_chart", "decode_chart", "char_lstm", "nkutil", "parse_base")
    names += ("ptb_unescape", "subbatching")
    from features.optional_imports import hidden, require

    require("full", "the benepar constituency parser (the full tier)")

    stand_in = None
    if "transformers" not in sys.modules and importlib.util.find_spec("transformers") is None:
        stand_in = sys.modules["transformers"] = _stand_in()
    try:
        # benepar imports NLTK (for its Tree), and NLTK imports scikit-learn if it can.
        with hidden("sklearn"):
            modules = {n: importlib.import_module(f"benepar.{n}") for n in names}
    except ImportError as exc:
        raise ImportError(f"benepar could not be imported ({exc})") from exc
    finally:
        if stand_in is not None and sys.modules.get("transformers") is stand_in:
            del sys.modules["transformers"]
    import torch_struct

    # torch-struct 0.5 predates torch.distributions' argument validation, so every TreeCRF
    # it builds warns that its class "does not define `arg_constraints`" and asks for
    # `arg_constraints = {}`: its distributions take log-potentials, which have no constraint.
    # We set that (a warnings filter would not hold where filters are reset, as under pytest).
    structs = torch_struct.distributions.StructDistribution
    if "arg_constraints" not in vars(structs):
        structs.arg_constraints = {}
    return types.SimpleNamespace(**modules, torch_struct=torch_struct)
