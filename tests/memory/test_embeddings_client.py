"""The OpenAI-compatible embeddings client against a real local server (tests/agent/fake_openai.py)."""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Iterator

import pytest

from talorys.providers.base import ProviderError
from talorys.providers.openai_embeddings import EmbeddingsConfig, OpenAIEmbeddingsClient
from tests.agent.fake_openai import (
    FakeOpenAI,
    Reply,
    Stall,
    bag_of_words,
    error,
    json_reply,
    vectors,
)
from tests.waiting import HANG_SECONDS


def make_client(fake: FakeOpenAI, **config: object) -> OpenAIEmbeddingsClient:
    options: dict = {"base_url": fake.base_url, "model": "fake-embedder"} | config
    return OpenAIEmbeddingsClient(EmbeddingsConfig(**options))


@pytest.fixture
def client(fake_openai: FakeOpenAI) -> Iterator[OpenAIEmbeddingsClient]:
    embedder = make_client(fake_openai, api_key="sk-embed", timeout=5.0, batch_size=4)
    yield embedder
    embedder.close()


def expect_error(embedder: OpenAIEmbeddingsClient, kind: str, texts: list[str]) -> str:
    with pytest.raises(ProviderError) as raised:
        embedder.embed_batch(texts)
    assert raised.value.kind == kind, raised.value.message
    assert raised.value.code == f"PROVIDER_{kind.upper()}"
    return raised.value.message


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # the fake's vectors have length 1


# What is sent and what comes back


def test_one_request_sends_model_inputs_and_float_format_and_returns_the_vectors(
    client, fake_openai
):
    texts = ["Buy milk today", "buy milk tomorrow", "quantum chromodynamics"]

    got = client.embed_batch(texts)

    assert got == [bag_of_words(text) for text in texts]
    assert all(len(vector) == 16 and math.isclose(cosine(vector, vector), 1) for vector in got)
    assert cosine(got[0], got[1]) > cosine(got[0], got[2])  # shared words are close
    assert fake_openai.embedding_requests == [
        {"model": "fake-embedder", "input": texts, "encoding_format": "float"}
    ]
    assert fake_openai.embedding_headers[0]["Authorization"] == "Bearer sk-embed"
    assert fake_openai.requests == []  # the chat's record is apart


def test_the_fake_embeds_at_its_configured_dimension(client, fake_openai):
    fake_openai.embedding_dimension = 48
    assert [len(vector) for vector in client.embed_batch(["a b", "c"])] == [48, 48]


def test_vectors_sent_out_of_order_are_put_back_in_input_order_by_index(client, fake_openai):
    fake_openai.script_embeddings(vectors([1, 0], [0, 1], [0.5, 0.5], order=[2, 0, 1]))
    assert client.embed_batch(["a", "b", "c"]) == [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]


def test_without_index_the_vectors_are_taken_in_the_order_sent(client, fake_openai):
    fake_openai.script_embeddings(vectors([3, 4], [5, 6], index=False))
    got = client.embed_batch(["a", "b"])
    assert got == [[3.0, 4.0], [5.0, 6.0]]
    assert all(type(number) is float for vector in got for number in vector)


def test_each_call_is_exactly_one_request_and_batching_is_the_callers(client, fake_openai):
    client.embed_batch(["a", "b", "c", "d"])  # batch_size=4: one request, not split
    client.embed_batch(["e"])
    assert [body["input"] for body in fake_openai.embedding_requests] == [
        ["a", "b", "c", "d"],
        ["e"],
    ]

    with pytest.raises(ValueError, match="at most 4"):
        client.embed_batch(["a", "b", "c", "d", "e"])
    assert len(fake_openai.embedding_requests) == 2


def test_no_texts_make_no_request(client, fake_openai):
    assert client.embed_batch([]) == []
    assert fake_openai.embedding_requests == []


def test_no_authorization_header_without_a_key(fake_openai):
    embedder = make_client(fake_openai)
    embedder.embed_batch(["hello"])
    embedder.close()
    assert "Authorization" not in fake_openai.embedding_headers[0]
    assert "api_key" not in repr(embedder.config)


# HTTP errors


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_auth(client, fake_openai, status):
    fake_openai.script_embeddings(error(status, "Incorrect API key provided"))
    message = expect_error(client, "auth", ["a"])
    assert (
        message
        == f"The embeddings server refused the API key ({status}): Incorrect API key provided"
    )


def test_429_is_rate_limited_with_the_servers_retry_after(client, fake_openai):
    fake_openai.script_embeddings(error(429, "Too many requests", **{"Retry-After": "7"}))
    message = expect_error(client, "rate_limited", ["a"])
    assert "Too many requests" in message and message.endswith("Try again in 7 s.")


def test_another_status_is_bad_response_with_a_short_excerpt_of_the_body(client, fake_openai):
    fake_openai.script_embeddings(
        error(500, "model not loaded " + "x" * 5000),
        Reply(parts=[b"<html>Bad Gateway</html>"], status=502, content_type="text/html"),
        Reply(parts=[], status=503),
    )
    first = expect_error(client, "bad_response", ["a"])
    assert first.startswith("The embeddings server answered 500: model not loaded xxx")
    assert len(first) < 400
    assert expect_error(client, "bad_response", ["a"]) == (
        "The embeddings server answered 502: <html>Bad Gateway</html>"
    )
    assert expect_error(client, "bad_response", ["a"]) == "The embeddings server answered 503."


# Bodies that are not usable vectors

NOT_JSON = Reply(parts=[b"{'data': oops"], content_type="application/json")
NAN_LITERAL = Reply(parts=[b'{"data": [{"embedding": [NaN, 1]}]}'], content_type="application/json")
HUGE_NUMBER = Reply(
    parts=[b'{"data": [{"embedding": [1e400, 1]}]}'], content_type="application/json"
)
HUGE_INTEGER = Reply(
    parts=[b'{"data": [{"embedding": [1' + b"0" * 400 + b", 1]}]}"], content_type="application/json"
)


@pytest.mark.parametrize(
    ("reply", "texts", "reason"),
    [
        (NOT_JSON, ["a"], "its body is not JSON"),
        (json_reply([[1.0, 2.0]]), ["a"], "its body has no 'data' list"),
        (json_reply({"data": {"0": [1.0]}}), ["a"], "its body has no 'data' list"),
        (json_reply({"embeddings": [[1.0]]}), ["a"], "its body has no 'data' list"),
        (vectors([1, 0]), ["a", "b"], "1 embeddings for 2 inputs"),
        (vectors([1, 0], [0, 1], [1, 1]), ["a", "b"], "3 embeddings for 2 inputs"),
        (json_reply({"data": [[1.0, 0.0]]}), ["a"], "an item of 'data' is not an object"),
        (
            json_reply({"data": [{"index": 0}]}),
            ["a"],
            "embedding 0 is not a list of numbers (got NoneType)",
        ),
        (vectors("AACAPwAAAEA="), ["a"], "embedding 0 is not a list of numbers (got str)"),
        (vectors([1, 0], [True, 0]), ["a", "b"], "embedding 1 holds True, not a number"),
        (vectors(["0.5", 1]), ["a"], "embedding 0 holds '0.5', not a number"),
        (vectors([None, 1]), ["a"], "embedding 0 holds None, not a number"),
        (vectors(["NaN", 1]), ["a"], "embedding 0 holds 'NaN', not a number"),
        (vectors([1, "Infinity"]), ["a"], "embedding 0 holds 'Infinity', not a number"),
        (vectors([float("nan"), 1]), ["a"], "it holds NaN, not a finite number"),
        (vectors([1, float("-inf")]), ["a"], "it holds -Infinity, not a finite number"),
        (NAN_LITERAL, ["a"], "it holds NaN, not a finite number"),
        (HUGE_NUMBER, ["a"], "embedding 0 holds inf, not a finite number"),
        (HUGE_INTEGER, ["a"], "embedding 0 holds inf, not a finite number"),
        (vectors([1, 0], [1, 0, 0]), ["a", "b"], "vectors of different dimensions ([2, 3])"),
        (vectors([], []), ["a", "b"], "a dimension of 0 (expected 1 to 8192)"),
        (vectors([0.0] * 8193), ["a"], "a dimension of 8193 (expected 1 to 8192)"),
        (
            json_reply(
                {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}
            ),
            ["a", "b"],
            "the indexes [0, 0] are not each of 0..1 once",
        ),
        (
            json_reply(
                {"data": [{"index": 1, "embedding": [1.0]}, {"index": 2, "embedding": [2.0]}]}
            ),
            ["a", "b"],
            "the indexes [1, 2] are not each of 0..1 once",
        ),
        (
            json_reply({"data": [{"index": 0, "embedding": [1.0]}, {"embedding": [2.0]}]}),
            ["a", "b"],
            "'index' is missing or not an integer in some items",
        ),
        (
            json_reply({"data": [{"index": "0", "embedding": [1.0]}]}),
            ["a"],
            "'index' is missing or not an integer in some items",
        ),
        (
            json_reply({"data": [{"index": False, "embedding": [1.0]}]}),
            ["a"],
            "'index' is missing or not an integer in some items",
        ),
    ],
)
def test_an_unusable_body_is_bad_response_saying_why(client, fake_openai, reply, texts, reason):
    fake_openai.script_embeddings(reply)
    message = expect_error(client, "bad_response", texts)
    assert message.startswith(f"The embeddings server's answer is unusable: {reason}")


def test_a_body_past_the_cap_is_refused_while_reading(client, fake_openai):
    fake_openai.embedding_dimension = 8192  # some 40 kB a vector
    client.max_response_bytes = 100_000
    message = expect_error(client, "bad_response", ["a", "b", "c"])
    assert "its body passed 100000 bytes" in message


# Reaching the server, and time


def test_a_closed_port_is_unreachable(fake_openai):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = make_client(fake_openai, base_url=f"http://127.0.0.1:{port}/v1")
    message = expect_error(embedder, "unreachable", ["a"])
    assert message.startswith(
        f"Could not reach the embeddings server at http://127.0.0.1:{port}/v1"
    )


def test_an_unusable_base_url_is_unreachable(fake_openai):
    embedder = make_client(fake_openai, base_url="ftp://example.invalid/v1")
    assert "is not usable" in expect_error(embedder, "unreachable", ["a"])


def test_a_server_that_never_answers_times_out(fake_openai):
    fake_openai.script_embeddings(Reply(parts=[], delay=5))
    embedder = make_client(fake_openai, timeout=0.3)
    started = time.monotonic()
    message = expect_error(embedder, "timeout", ["a"])
    assert time.monotonic() - started < 2
    assert message == "The embeddings server went quiet for more than 0.3 s."
    embedder.close()
    assert fake_openai.disconnected.wait(HANG_SECONDS)  # the client hung up; the server saw it


def test_a_body_that_stalls_midway_times_out(fake_openai):
    fake_openai.script_embeddings(
        Reply(parts=[b'{"data": [', Stall(5), b"]}"], content_type="application/json")
    )
    embedder = make_client(fake_openai, timeout=0.3)
    started = time.monotonic()
    expect_error(embedder, "timeout", ["a"])
    assert time.monotonic() - started < 2
    embedder.close()


def test_a_body_that_trickles_past_the_timeout_times_out(fake_openai):
    # Never silent for the whole 0.4 s, but the body takes far longer than that to arrive.
    trickle: list[bytes | Stall] = [b'{"data": [{"embedding": [1']
    trickle += [part for _ in range(10) for part in (Stall(0.15), b"0")]
    fake_openai.script_embeddings(Reply(parts=[*trickle, b"]}]}"], content_type="application/json"))
    embedder = make_client(fake_openai, timeout=0.4)
    started = time.monotonic()
    message = expect_error(embedder, "timeout", ["a"])
    assert time.monotonic() - started < 1.5
    assert message == "The embeddings server took more than 0.4 s to send its answer."
    embedder.close()


def test_the_client_recovers_after_a_failure(client, fake_openai):
    fake_openai.script_embeddings(error(500, "boom"))
    expect_error(client, "bad_response", ["a"])
    assert client.embed_batch(["a"]) == [bag_of_words("a")]
    assert len(fake_openai.embedding_requests) == 2
