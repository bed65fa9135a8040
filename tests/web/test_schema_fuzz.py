"""/openapi.json and the live service agree: schemathesis makes requests from the schema, valid
and invalid, and checks every answer (status documented, body valid against its schema, no
5xx, schema-valid data accepted, schema-invalid data refused). Seeded (`derandomize`) and short:
`N_CASES` valid and as many invalid requests per operation. The admin reload is left out: each
accepted case would reload the model.
"""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

OPERATIONS = r"^/(v1/(score|rerank|accuracy|model)|healthz|readyz|openapi\.json)$"
N_CASES = 25


def _lengths_differ(case) -> bool:
    """/v1/accuracy with as many reference lists as hypotheses is the one rule of a body that
    JSON Schema cannot state (the schema says it in words): such a body is answered 422."""
    body = case.body if isinstance(case.body, dict) else {}
    hyps, refs = body.get("hypotheses"), body.get("references")
    return (
        case.path == "/v1/accuracy"
        and isinstance(hyps, list)
        and isinstance(refs, list)
        and len(hyps) != len(refs)
    )


# Invalid data may also be refused for its size (413) before its shape is looked at.
CONFIG = {"checks": {"negative_data_rejection": {"expected-statuses": [400, 413, 415, 422]}}}


def _operations(url: str):
    config = schemathesis.config.SchemathesisConfig.from_dict(CONFIG)
    schema = schemathesis.openapi.from_url(url + "/openapi.json", config=config)
    schema = schema.include(path_regex=OPERATIONS)
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_service_does_what_its_schema_says(server, mode):
    operations = _operations(server.url)
    assert {op.path for op in operations} >= {"/v1/score", "/v1/rerank", "/v1/accuracy"}
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and operation.method.upper() == "GET":
            continue  # no parameters to get wrong

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=N_CASES,
            derandomize=True,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case):
            excluded = [positive_data_acceptance] if _lengths_differ(case) else []
            case.call_and_validate(base_url=server.url, timeout=30, excluded_checks=excluded)

        check()
