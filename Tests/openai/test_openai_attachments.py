"""Images and files through the official `openai` client: an image as an `image_url` data URL and a
document as a `file` part, both stored as the caller's files and read by the model, `GET /v1/models`'
`vision` flag as an extra field the client keeps, and the refusals as the client's exceptions."""
import base64
import struct
import zlib

import openai
import pytest
from test_openai_client import client


def png(width, height):
    """A real RGB PNG (stored deflate via zlib), as TestPNG makes them on the Swift side."""
    raw = b"".join(b"\x00" + b"".join(bytes((x * 7 % 256, y * 5 % 256, 99)) for x in range(width))
                   for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def data_url(media_type, data):
    return f"data:{media_type};base64," + base64.b64encode(data).decode()


def test_models_say_which_see(parley):
    models = list(client(parley).models.list())
    assert [(model.id, model.vision) for model in models] == [("openai:fake", False)]


def test_an_image_and_a_document_reach_the_demo_model(parley):
    raw = client(parley).chat.completions.with_raw_response.create(model="demo", messages=[{"role": "user", "content": [
        {"type": "text", "text": "what are these?"},
        {"type": "image_url", "image_url": {"url": data_url("image/png", png(40, 30)), "detail": "low"}},
        {"type": "file", "file": {"file_data": data_url("text/plain", b"Buy milk."), "filename": "list.txt"}},
    ]}])
    answer = raw.parse().choices[0].message.content
    assert "I see 1 image: 40×30 PNG" in answer, answer
    assert "I read 1 document: list.txt (text/plain, 9 characters)." in answer, answer
    conversation = parley.api("GET", f"/api/conversations/{raw.headers['x-parley-conversation']}")
    user = parley.api("GET", f"/api/messages/{conversation['messages'][0]['id']}")
    files = [part for part in user["parts"] if part["type"] == "file"]
    assert [(f["kind"], f["filename"]) for f in files] == [("image", "image.png"), ("document", "list.txt")]


def test_refusals_are_the_clients_exceptions(parley, upstream):
    before = len(upstream.requests)
    image = {"type": "image_url", "image_url": {"url": data_url("image/png", png(4, 4))}}
    with pytest.raises(openai.BadRequestError) as caught:
        client(parley).chat.completions.create(model="openai:fake", messages=[{"role": "user", "content": [image]}])
    assert caught.value.code == "model_cannot_see_images"
    remote = {"type": "image_url", "image_url": {"url": "http://127.0.0.1:1/secret.png"}}
    with pytest.raises(openai.BadRequestError) as caught:
        client(parley).chat.completions.create(model="demo", messages=[{"role": "user", "content": [remote]}])
    assert caught.value.code == "remote_url_not_allowed"
    with pytest.raises(openai.NotFoundError) as caught:
        client(parley).chat.completions.create(model="demo", messages=[{"role": "user", "content": [
            {"type": "text", "text": "x"}, {"type": "file", "file": {"file_id": "no-such-file"}}]}])
    assert caught.value.status_code == 404
    assert len(upstream.requests) == before, "nothing was sent upstream"
