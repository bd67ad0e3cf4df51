def test_health_is_public(anon_api, local_embeddings):
    from talorys.ops.services import heartbeat_record

    heartbeat_record(name="worker")  # else "degraded": no worker or beat has been seen
    heartbeat_record(name="beat")
    response = anon_api.get("/api/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_tasks_need_login(anon_api):
    response = anon_api.get("/api/tasks")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_task_roundtrip(api):
    created = api.post("/api/tasks", {"title": "Buy milk"})
    assert created.status_code == 201, created.content
    listed = api.get("/api/tasks").json()
    assert listed["count"] == 1
    assert listed["items"][0]["title"] == "Buy milk"
