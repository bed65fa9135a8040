from scorer.web import create_app


def test_healthz_answers_json():
    client = create_app({"TESTING": True}).test_client()
    resp = client.get("/healthz")
    assert resp.status_code == 200 and resp.get_json() == {"status": "ok"}
