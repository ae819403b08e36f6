#!/usr/bin/env python3
"""Writes docs/openapi.json (Parley's REST API as OpenAPI 3.1). SwiftPM compiles its bytes into the server
(Sources/ParleyServer/openapi.json links to it), which serves them at GET /api/openapi.json. Edit this file,
run it, commit docs/openapi.json: OpenAPIDocumentTests fails when a route of the router is missing from the
document (or the reverse), and when the served bytes differ from the file."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(kind):
    return {"type": [kind, "null"]}


def obj(properties, required=None, **extra):
    schema = {"type": "object", "properties": properties,
              "required": list(properties) if required is None else required}
    schema.update(extra)
    return schema


STRING, INTEGER, NUMBER, BOOLEAN = ({"type": t} for t in ("string", "integer", "number", "boolean"))
# Log probabilities as OpenAI writes them (`choices[0].logprobs`): the upstream's items, relayed as it sent them.
LOGPROB_TOKEN = {"token": STRING, "logprob": NUMBER,
                 "bytes": {"type": ["array", "null"], "items": INTEGER}}
LOGPROBS = obj({"content": {"type": "array", "items": obj(
    {**LOGPROB_TOKEN, "top_logprobs": {"type": "array", "items": obj(LOGPROB_TOKEN)}})},
    "refusal": {"type": "null"}})
# A call of a client's tool, as OpenAI writes it in an assistant message.
TOOL_CALL = obj({"id": STRING, "type": {"type": "string", "const": "function"},
                 "function": obj({"name": STRING, "arguments": STRING})})
# One reply's token count (ReplyTokens.range), and a total of them (saturating at Int64.max).
REPLY_TOKENS = {"type": ["integer", "null"], "minimum": 0, "maximum": 1_000_000_000}
TOKEN_TOTAL = {"type": "integer", "minimum": 0, "maximum": 9223372036854775807}
TIME = {"type": "string", "description": "ISO-8601 UTC with milliseconds (2026-11-29T14:20:00.123Z)."}
STATUS = {"type": "string", "enum": ["streaming", "complete", "stopped", "failed", "interrupted", "awaiting_approval"],
          "description": "`awaiting_approval`: paused until each of its tool calls that asks is approved or denied "
                         "(POST /api/messages/{id}/tool_calls/{call_id})."}
FINISH_REASON = {"type": ["string", "null"],
                 "description": "`stop`, `length`, `tool_calls` (also a reply paused for approval), `content_filter`, "
                                "`tool_rounds` (PARLEY_MAX_TOOL_ROUNDS reached), another provider's own reason as "
                                "given, or null."}
# A conversation's `tools`: tool ids (`<server>/<tool>`, GET /api/tools) and `<server>/*` (all of a server's).
TOOLS_FIELD = {"type": "array", "maxItems": 128, "items": {"type": "string", "minLength": 1, "maxLength": 200},
               "description": "Tools its replies may call: tool ids (`<server>/<tool>`) and `<server>/*`; "
                              "duplicates dropped, order kept."}
TOOL_CALL_STATUS = {"type": "string", "enum": ["streaming", "awaiting_approval", "running", "complete", "error",
                                               "denied", "cancelled"]}
TOOL_DECISION = {"type": ["string", "null"], "enum": ["approve", "deny", None]}
ROLE = {"type": "string", "enum": ["user", "assistant", "system"]}

CONVERSATION_FIELDS = {
    "id": STRING, "title": STRING, "model": nullable("string"), "system_prompt": nullable("string"),
    "current_leaf_id": nullable("string"), "created_at": TIME, "updated_at": TIME,
    "temperature": nullable("number"), "top_p": nullable("number"), "max_tokens": nullable("integer"),
    "usage": ref("TokenTotals"), "pinned": BOOLEAN, "archived": BOOLEAN,
    "imported": {"type": "boolean", "description": "Made by POST /api/import (before migration 11: false)."},
    "tools": TOOLS_FIELD,
}
EXPORT_CONVERSATION_FIELDS = {
    "id": STRING, "title": STRING, "model": nullable("string"), "system_prompt": nullable("string"),
    "temperature": nullable("number"), "top_p": nullable("number"), "max_tokens": nullable("integer"),
    "pinned": BOOLEAN, "archived": BOOLEAN, "tools": TOOLS_FIELD, "current_leaf_id": nullable("string"),
    "created_at": TIME, "updated_at": TIME,
    "messages": {"type": "array", "items": ref("ExportedMessage")},
    "files": {"type": "array", "items": ref("ExportedFile"),
              "description": "Every file its user messages show, once (issue 21); `data` absent with "
                             "`?attachments=omit`. Optional on import (older exports)."},
}
TITLE = {"type": "string", "minLength": 1, "maxLength": 200,
         "description": "Not only white space; at most PARLEY_MAX_TITLE_CHARS (200) code points."}
SETTINGS_BODY = {
    "title": TITLE, "model": nullable("string"), "system_prompt": nullable("string"),
    "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
    "top_p": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    "max_tokens": {"type": ["integer", "null"], "minimum": 1},
}

PREFERENCE_FIELDS = {
    "theme": {"type": "string", "enum": ["system", "light", "dark"]},
    "default_model": {"type": ["string", "null"], "description": "A model the caller may use (GET /api/models)."},
    "default_system_prompt": {"type": ["string", "null"],
                              "description": "At most PARLEY_MAX_SYSTEM_PROMPT_BYTES; empty reads as null."},
    "send_key": {"type": "string", "enum": ["enter", "ctrl_enter"]},
}

# A reply's parts (MessagePart+JSON.swift). Written inline, not as $refs, because the event schemas below
# use them too and each event's `data` schema must stand alone.
TOOL_CALL_RESULT = obj({
    "content": {"type": "array", "items": {"type": "object", "required": ["type"], "properties": {"type": STRING}},
                "description": "The MCP content items as the tool gave them (`{type:text,text}`, "
                               "`{type:image,data,mimeType}`, `{type:audio,data,mimeType}`, resources…), cut at "
                               "PARLEY_MAX_TOOL_RESULT_BYTES with a last text item saying so. An image or audio "
                               "item's bytes: GET /api/messages/{id}/tool_calls/{call_id}/content/{index}."},
    "structured_content": {"type": "object", "description": "The tool's structured result, when it gave one."},
    "is_error": BOOLEAN}, required=["content", "is_error"],
    description="A tool call's result (a denied call's says so, with `is_error` true).")
TOOL_CALL_PART = obj({
    "type": {"type": "string", "const": "tool_call"},
    "id": {"type": "string", "description": "Parley's id of the call, unique within the message: what a decision "
                                            "names."},
    "provider_id": {"type": "string", "description": "The model's own id of the call."},
    "tool": {"type": "string", "description": "The tool's id (`<server>/<tool>`); empty for a name that maps to "
                                              "no tool."},
    "name": {"type": "string", "description": "The function name the model called."},
    "arguments_text": {"type": "string", "description": "The arguments as the model wrote them (even when not "
                                                        "JSON)."},
    "arguments": {"type": ["object", "null"], "description": "The parsed arguments once complete and a JSON "
                                                             "object; else null."},
    "status": TOOL_CALL_STATUS, "decision": TOOL_DECISION,
    "result": {"oneOf": [TOOL_CALL_RESULT, {"type": "null"}]},
    "round": {"type": "integer", "minimum": 0,
              "description": "The model answer it was made in: 0 the first, 1 the one after the first results…"}},
    description="A tool call inside a reply.")
TEXT_PART = obj({"type": {"type": "string", "const": "text"}, "text": STRING,
                 "html": {"type": ["string", "null"],
                          "description": "This part's own render on a finished reply; null while it streams, on "
                                         "user and system messages and in exports."}})
REASONING_PART = obj({"type": {"type": "string", "const": "reasoning"}, "text": STRING})
# A2UI (issue 22): the messages are checked against the A2UI v0.9 schemas by Tests/a2ui, not here.
A2UI_MESSAGE = {"type": "object", "required": ["version"], "properties": {"version": {"const": "v0.9"}},
                "description": "A valid A2UI v0.9 agent-to-client message (createSurface, updateComponents, "
                               "updateDataModel or deleteSurface)."}
SURFACE_PART = obj({"type": {"type": "string", "const": "surface"}, "surface_id": STRING,
                    "messages": {"type": "array", "items": A2UI_MESSAGE}},
                   description="The A2UI messages of one surface a reply drew or changed with parley/render_ui, "
                               "valid and in order; a surface's state is the fold of its parts over the branch.")
A2UI_ACTION = obj({"name": STRING, "surfaceId": STRING, "sourceComponentId": STRING, "timestamp": STRING,
                   "context": {"type": "object"}}, additionalProperties=False,
                  description="An A2UI v0.9 action: `context` holds the bound values, resolved.")
ACTION_PART = obj({"type": {"type": "string", "const": "action"}, "surface_id": STRING, "action": A2UI_ACTION},
                  description="A user turn made by a surface's action.")
# A file a user message carries (its `attachments`), after its text part.
FILE_KIND = {"type": "string", "enum": ["image", "document"],
             "description": "`image`: sent to vision models as an image; `document`: sent to every model as text."}
FILE_PART = obj({"type": {"type": "string", "const": "file"}, "file_id": STRING, "filename": STRING,
                 "media_type": STRING, "kind": FILE_KIND},
                description="A file of a user message (`attachments`): its bytes are GET /api/files/{file_id}.")
# The media types a stored file is served with (text as UTF-8, `; charset=utf-8`).
FILE_MEDIA = ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain", "text/markdown",
              "text/csv"]
BINARY = {"type": "string", "format": "binary"}
# The snapshot event's parts: a text part names its blocks instead of carrying HTML.
SNAPSHOT_TEXT_PART = obj({"type": {"type": "string", "const": "text"}, "text": STRING,
                          "first_block": {"type": "integer", "minimum": 0},
                          "block_count": {"type": "integer", "minimum": 0}})

SCHEMAS = {
    "Error": obj({"error": obj({"code": STRING, "message": STRING})},
                 description="Every error of Parley's own routes."),
    "OpenAIError": obj({"error": obj({"message": STRING, "type": STRING, "param": nullable("string"),
                                      "code": nullable("string")})},
                       description="Errors of /v1 routes, in OpenAI's shape."),
    "Health": obj({"status": {"type": "string", "const": "ok"}}),
    "HealthDown": obj({"status": {"type": "string", "const": "unavailable"},
                       "down": {"type": "array", "items": {"type": "string", "enum": ["store", "redis"]}}}),
    "TokenTotals": obj({"input_tokens": TOKEN_TOTAL, "output_tokens": TOKEN_TOTAL, "replies": INTEGER,
                        "estimated_replies": INTEGER},
                       description="Totals saturate at 9223372036854775807 instead of overflowing."),
    "ReplyUsage": {"type": ["object", "null"],
                   "properties": {"input_tokens": REPLY_TOKENS, "output_tokens": REPLY_TOKENS,
                                  "estimated": BOOLEAN},
                   "required": ["input_tokens", "output_tokens", "estimated"],
                   "description": "null while streaming and for turns a client brought to /v1/chat/completions. "
                                  "Each count is 0 to 1000000000 (an import outside it is 400 invalid_import)."},
    "ModelList": obj({"models": {"type": "array", "items": obj({
        "id": STRING, "provider": STRING, "label": STRING,
        "vision": {"type": "boolean", "description": "The model is sent images (PARLEY_VISION_MODELS; the demo "
                                                     "model always)."}})}}),
    "Conversation": obj(dict(CONVERSATION_FIELDS, messages={"type": "array", "items": ref("Message")}),
                        required=list(CONVERSATION_FIELDS)),
    "ConversationWithMessages": {"allOf": [ref("Conversation"), {"required": ["messages"]}]},
    "ConversationPage": obj({"items": {"type": "array", "items": ref("Conversation")},
                             "next_cursor": nullable("string")}),
    "SearchHit": obj(dict(CONVERSATION_FIELDS, message_id=nullable("string"),
                          snippet={"type": "string", "description": "Escaped text; <mark> is its only markup. About 64 characters around the first match, at most 512 bytes of UTF-8 before escaping (marks and ellipses included)."}),
                     required=list(CONVERSATION_FIELDS) + ["message_id", "snippet"]),
    "SearchPage": obj({"items": {"type": "array", "items": ref("SearchHit")},
                       "order": {"type": "string", "enum": ["relevance", "newest"]},
                       "next_cursor": {"type": "null"}}),
    "Message": obj({
        "id": STRING, "conversation_id": STRING, "parent_id": nullable("string"), "role": ROLE,
        "content": {"type": "string", "description": "The reply's text parts joined (a blank line between two)."},
        "reasoning": STRING, "status": STATUS, "finish_reason": FINISH_REASON,
        "model": nullable("string"), "usage": ref("ReplyUsage"), "created_at": TIME, "updated_at": TIME,
        "siblings": obj({"index": INTEGER, "count": INTEGER, "ids": {"type": "array", "items": STRING}}),
        "html": {"type": "string",
                 "description": "A finished assistant message's rendered, sanitised HTML. Absent while it "
                                "streams, and always absent for user and system messages: they are plain "
                                "text, shown exactly as typed from `content`. With tool calls: the text "
                                "parts' HTML joined."},
        "error": obj({"code": STRING, "message": STRING}),
        "parts": {"type": "array", "items": ref("MessagePart"),
                  "description": "The reply in order: reasoning, text and tool calls (a user or system message: "
                                 "one text part, then a user message's files as `file` parts; text parts have "
                                 "`html` only on a finished reply)."},
    }, required=["id", "conversation_id", "parent_id", "role", "content", "reasoning", "status", "finish_reason",
                 "model", "usage", "created_at", "updated_at", "parts"]),
    "Turn": obj({"user_message": ref("Message"), "assistant_message": ref("Message")}),
    "ConversationStart": obj({"conversation": ref("Conversation"), "user_message": ref("Message"),
                              "assistant_message": ref("Message")},
                             description="POST /api/conversations with `message`: the conversation as it is once "
                                         "the turn is written (`current_leaf_id` the reply), and the two messages "
                                         "a send answers (the reply `streaming`)."),
    "MessagePart": {"oneOf": [ref("TextPart"), ref("ReasoningPart"), ref("ToolCallPart"), ref("FilePart"),
                              ref("SurfacePart"), ref("ActionPart")],
                    "description": "One piece of a message, by `type`."},
    "TextPart": TEXT_PART,
    "ReasoningPart": REASONING_PART,
    "ToolCallPart": TOOL_CALL_PART,
    "FilePart": FILE_PART,
    "SurfacePart": SURFACE_PART,
    "ActionPart": ACTION_PART,
    "File": obj({
        "id": STRING,
        "filename": {"type": "string", "description": "The name given on upload (multipart filename or "
                                                      "`?filename=`); `file` when none."},
        "media_type": {"type": "string", "description": "Decided from the bytes (text: from the name's extension): "
                                                        "image/png, image/jpeg, image/gif, image/webp, "
                                                        "application/pdf, text/plain, text/markdown, text/csv, "
                                                        "application/json."},
        "bytes": {"type": "integer", "minimum": 1, "description": "The stored size, after any re-encode."},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Of the stored bytes."},
        "kind": FILE_KIND,
        "width": {"type": "integer", "description": "Images only, in pixels (after any resize)."},
        "height": {"type": "integer", "description": "Images only, in pixels (after any resize)."},
        "pages": {"type": "integer", "description": "PDFs only."},
        "text_chars": {"type": "integer", "description": "Documents: characters of the text models read."},
        "note": {"type": "string", "description": "What the uploader should know (a PDF with no extractable "
                                                  "text...)."},
        "created_at": TIME},
        required=["id", "filename", "media_type", "bytes", "sha256", "kind", "created_at"],
        description="A stored file of the caller's (POST /api/files)."),
    "FilePage": obj({"items": {"type": "array", "items": ref("File")}, "next_cursor": nullable("string")}),
    "FileDeletion": obj({
        "id": STRING,
        "deleted": {"type": "boolean", "description": "false: messages still show the file; it is gone from "
                                                     "GET /api/files and cannot be attached again, but its bytes "
                                                     "stay until those messages are deleted."},
        "kept_for_messages": {"type": "integer", "minimum": 0, "description": "Messages holding it (0 when deleted)."},
        "message": STRING}),
    "ToolCallResult": TOOL_CALL_RESULT,
    "Tool": obj({
        "id": {"type": "string", "description": "`<server>/<tool>`: what a conversation's `tools` names."},
        "server": STRING, "name": STRING, "title": nullable("string"), "description": nullable("string"),
        "input_schema": {"type": "object", "description": "The JSON Schema of its arguments."},
        "approval": {"type": "string", "enum": ["always", "never", "auto"],
                     "description": "When a call asks first: `always`, `never`, or `auto` (unless the tool says "
                                    "it only reads; always when it says it destroys). An \"always allow\" "
                                    "(GET /api/tool_policies) skips the question."},
        "read_only": {"type": "boolean", "description": "The tool's `readOnlyHint`, when it gives one."},
        "destructive": {"type": "boolean", "description": "The tool's `destructiveHint`, when it gives one."},
        "available": {"type": "boolean", "description": "false: its server does not answer now; the tool is "
                                                        "not offered to models until it does."}},
        required=["id", "server", "name", "title", "description", "input_schema", "approval", "available"]),
    "ToolList": obj({"items": {"type": "array", "items": ref("Tool")}}),
    "ToolPolicy": obj({"tool": STRING, "created_at": TIME},
                      description="An \"always allow\": calls of `tool` run without asking."),
    "ToolPolicyList": obj({"items": {"type": "array", "items": ref("ToolPolicy")}}),
    "ExportedMessage": obj({
        "id": STRING, "parent_id": nullable("string"), "role": ROLE, "content": STRING, "reasoning": STRING,
        "status": STATUS, "finish_reason": FINISH_REASON, "model": nullable("string"),
        "usage": ref("ReplyUsage"), "error": {"type": ["object", "null"],
                                              "properties": {"code": STRING, "message": STRING},
                                              "required": ["code", "message"]},
        "created_at": TIME, "updated_at": TIME,
        "files": {"type": "array", "items": STRING,
                  "description": "A user message's files, in order: ids of entries in the conversation's `files`."},
        "parts": {"type": "array", "items": ref("MessagePart"),
                  "description": "Only a reply with tool calls (assistant messages only); text parts without "
                                 "`html` (rendered again on import); calls left `streaming` or `running` are "
                                 "imported `cancelled`."}},
        required=["id", "parent_id", "role", "content", "reasoning", "status", "finish_reason", "model", "usage",
                  "error", "created_at", "updated_at"]),
    "ExportedFile": obj({"id": STRING, "filename": STRING, "media_type": STRING,
                         "kind": {"type": "string", "enum": ["image", "document"]},
                         "data": {"type": "string", "description": "The stored bytes, base64; checked again on "
                                                                   "import exactly as an upload, kept byte for byte."}},
                        required=["id", "filename", "media_type", "kind"]),
    "ConversationExport": obj(dict({"parley_export": {"type": "integer", "const": 1}}, **EXPORT_CONVERSATION_FIELDS)),
    "FullExport": obj({"parley_export": {"type": "integer", "const": 1},
                       "conversations": {"type": "array", "items": obj(EXPORT_CONVERSATION_FIELDS)}}),
    "ImportResult": obj({"items": {"type": "array", "items": ref("Conversation")}}),
    "Preferences": obj(PREFERENCE_FIELDS, description="The caller's own preferences, used for new conversations."),
    "User": obj({"id": STRING, "username": STRING, "display_name": STRING,
                 "role": {"type": "string", "enum": ["admin", "member"]}, "disabled": BOOLEAN, "created_at": TIME}),
    "UserList": obj({"items": {"type": "array", "items": ref("User")}}),
    "Me": obj({"user": ref("User"), "mode": {"type": "string", "enum": ["team", "local"]}}),
    "Session": obj({"id": STRING, "created_at": TIME, "last_used_at": nullable("string"), "user_agent": STRING,
                    "current": BOOLEAN}),
    "SessionList": obj({"items": {"type": "array", "items": ref("Session")}}),
    "Token": obj({"id": STRING, "name": STRING, "created_at": TIME, "last_used_at": nullable("string"),
                  "token": {"type": "string", "description": "The secret (pt_…): only in the answer that creates it."}},
                 required=["id", "name", "created_at", "last_used_at"]),
    "TokenList": obj({"items": {"type": "array", "items": ref("Token")}}),
    "UserUsage": obj({"user_id": STRING, "conversations": INTEGER, "messages": INTEGER, "assistant_replies": INTEGER,
                      "output_tokens": INTEGER, "last_activity_at": nullable("string"), "tokens": ref("TokenTotals")}),
    "UsageReport": obj({"from": STRING, "to": STRING,
                        "days": {"type": "array", "items": obj({
                            "day": STRING, "model": STRING, "input_tokens": INTEGER, "output_tokens": INTEGER,
                            "replies": INTEGER, "estimated_replies": INTEGER})},
                        "total": ref("TokenTotals")}),
    "OpenAIModelList": obj({"object": {"type": "string", "const": "list"},
                            "data": {"type": "array", "items": obj({
                                "id": STRING, "object": {"type": "string", "const": "model"}, "created": INTEGER,
                                "owned_by": STRING,
                                "vision": {"type": "boolean", "description": "The model is sent images "
                                                                              "(PARLEY_VISION_MODELS), as GET /api/models says."}})}}),
    "OpenAIChatRequest": {
        "type": "object", "required": ["model", "messages"],
        "properties": {
            "model": STRING,
            "messages": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["role"],
                "properties": {"role": {"type": "string",
                                        "enum": ["system", "developer", "user", "assistant", "tool"]},
                               "content": {"anyOf": [STRING, {"type": "null"}, {"type": "array", "items": {"anyOf": [
                                   obj({"type": {"type": "string", "const": "text"}, "text": STRING}),
                                   obj({"type": {"type": "string", "const": "image_url"},
                                        "image_url": obj({"url": STRING, "detail": STRING}, required=["url"])},
                                       description="User messages only. `url` must be a data URL "
                                                   "(`data:image/png;base64,…`): any other URL is 400 "
                                                   "`remote_url_not_allowed`, never fetched; `detail` is ignored."),
                                   obj({"type": {"type": "string", "const": "file"},
                                        "file": obj({"file_data": STRING, "file_id": STRING, "filename": STRING},
                                                    required=[])},
                                       description="User messages only. `file_data` (a data URL or bare base64, "
                                                   "named by `filename`) or `file_id` (one of the caller's files; "
                                                   "another user's is 404), one of the two."),
                               ]}}],
                                           "description": "null only in an assistant message with tool_calls. "
                                                          "Images and files are checked and stored as the caller's "
                                                          "files exactly as POST /api/files does (docs/api.md)."},
                               "tool_calls": {"type": "array", "items": TOOL_CALL,
                                              "description": "An assistant message's calls of the client's tools."},
                               "tool_call_id": {"type": "string", "description": "A tool message: the call it answers."}}}},
            "tools": {"type": "array", "maxItems": 128, "items": obj(
                {"type": {"type": "string", "const": "function"},
                 "function": obj({"name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                                  "description": STRING, "parameters": {"type": "object"}}, required=["name"])},
                required=["type", "function"])},
            "tool_choice": {"anyOf": [{"type": "string", "enum": ["auto", "none", "required"]},
                                      obj({"type": {"type": "string", "const": "function"},
                                           "function": obj({"name": STRING})})]},
            "parallel_tool_calls": BOOLEAN,
            "stream": BOOLEAN,
            "stream_options": {"type": "object", "properties": {"include_usage": BOOLEAN}},
            "temperature": {"type": "number", "minimum": 0, "maximum": 2},
            "top_p": {"type": "number", "minimum": 0, "maximum": 1},
            "max_tokens": {"type": "integer", "minimum": 1},
            "max_completion_tokens": {"type": "integer", "minimum": 1},
            "n": {"type": "integer", "const": 1},
            "stop": {"anyOf": [{"type": "string", "minLength": 1},
                               {"type": "array", "maxItems": 4, "items": {"type": "string", "minLength": 1}}]},
            "seed": INTEGER,
            "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2},
            "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2},
            "logprobs": {"type": "boolean", "description": "true relays the model's log probabilities "
                                                           "(choices[0].logprobs.content, OpenAI's shape); "
                                                           "OpenAI-compatible models only (others refuse it, 400)."},
            "top_logprobs": {"type": "integer", "minimum": 0, "maximum": 20,
                             "description": "Requires logprobs: true."},
            "user": {"type": "string", "maxLength": 256,
                     "description": "Sent on as `user` (OpenAI-compatible) or `metadata.user_id` (Anthropic)."},
            "response_format": {"type": "object", "required": ["type"], "properties": {
                "type": {"type": "string", "enum": ["text", "json_object", "json_schema"]},
                "json_schema": {"type": "object", "required": ["name"], "properties": {"name": STRING}}}}},
        "description": "stop, seed, the penalties, logprobs, user and response_format go to the provider as "
                       "given; one the chosen model's provider cannot honour is a 400 naming it "
                       "(`unsupported_parameter`), never ignored (docs/api.md). tools are the client's: offered to the "
                       "model and relayed (finish_reason tool_calls), never run by Parley; tool_choice and "
                       "parallel_tool_calls go with them; a request may end with role tool messages (the results), "
                       "which the model answers. A model that calls no tools (demo) refuses them (400 naming tools, "
                       "or messages for tool history); functions and function_call are refused; "
                       "other fields are ignored.",
        "examples": [{"model": "demo", "messages": [{"role": "user", "content": "Hello"}]},
                     {"model": "demo", "stream": True, "stream_options": {"include_usage": True},
                      "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}]},
    "OpenAIChatCompletion": obj({
        "id": STRING, "object": {"type": "string", "const": "chat.completion"}, "created": INTEGER, "model": STRING,
        "choices": {"type": "array", "items": obj({
            "index": INTEGER,
            "message": obj({"role": {"type": "string", "const": "assistant"}, "content": nullable("string"),
                            "refusal": {"type": "null"}, "reasoning_content": STRING,
                            "tool_calls": {"type": "array", "items": TOOL_CALL}},
                           required=["role", "content", "refusal"]),
            "logprobs": {"oneOf": [{"type": "null"}, LOGPROBS],
                         "description": "null unless the request had logprobs: true."},
            "finish_reason": STRING})},
        "usage": {"type": ["object", "null"], "properties": {
            "prompt_tokens": INTEGER, "completion_tokens": INTEGER, "total_tokens": INTEGER}}}),
}

REPLY_EVENTS = ["snapshot", "reasoning", "block", "tail", "tail_append", "tail_html", "delta", "tool_call",
                "tool_call_delta", "tool_result", "surface", "error", "done"]
USER_EVENTS = ["ready", "conversation_created", "conversation_updated", "conversation_deleted", "turn",
               "reply_started", "reply_finished", "preferences_changed", "resync"] + REPLY_EVENTS


TEXT_EVENT = obj({"text": STRING})
SUMMARY = obj({"id": STRING, "title": STRING, "model": nullable("string"), "current_leaf_id": nullable("string"),
               "created_at": TIME, "updated_at": TIME, "pinned": BOOLEAN, "archived": BOOLEAN, "imported": BOOLEAN})
# Each event's `data`, a JSON object (docs/api.md, "The event stream" and "The user event stream").
EVENT_DATA = {
    "snapshot": obj({"message_id": STRING, "status": STATUS, "blocks": {"type": "array", "items": STRING},
                     "tail": STRING, "content": STRING, "content_length": INTEGER, "reasoning": STRING,
                     "tail_html": {"type": ["string", "null"],
                                   "description": "html mode only: the current provisional HTML of the tail "
                                                  "(see tail_html); null when there is none."},
                     "parts": {"type": "array",
                               "items": {"oneOf": [SNAPSHOT_TEXT_PART, REASONING_PART, TOOL_CALL_PART, SURFACE_PART]},
                               "description": "The reply so far in order; a text part names its blocks "
                                              "(`first_block`, `block_count`) instead of carrying HTML."}},
                    required=["message_id", "status", "blocks", "tail", "content", "content_length",
                              "reasoning", "parts"]),
    "tail_html": obj({"html": {"type": ["string", "null"],
                               "description": "Provisional HTML of the open tail, appended to the first "
                                              "`keep` UTF-16 code units of the previous one; null: none "
                                              "(show the raw tail). Sent without an id, never replayed."},
                      "keep": {"type": "integer", "minimum": 1,
                               "description": "UTF-16 code units of the previous tail_html kept; absent: 0."}},
                     required=["html"]),
    "reasoning": TEXT_EVENT, "tail": TEXT_EVENT, "tail_append": TEXT_EVENT, "delta": TEXT_EVENT,
    "block": obj({"index": INTEGER, "html": STRING}),
    "error": obj({"code": STRING, "message": STRING}),
    "tool_call": obj({"id": STRING, "tool": STRING, "name": STRING, "provider_id": STRING,
                      "status": TOOL_CALL_STATUS,
                      "arguments": {"type": "object", "description": "Once the arguments are complete and parsed."},
                      "decision": {"type": "string", "enum": ["approve", "deny"]}},
                     required=["id", "tool", "name", "provider_id", "status"],
                     description="A call began (`streaming`) or changed status (`awaiting_approval`, `running`, "
                                 "`cancelled`...)."),
    "tool_call_delta": obj({"id": STRING, "arguments_delta": STRING}),
    "surface": obj({"surface_id": STRING, "message": A2UI_MESSAGE},
                   description="A valid A2UI message of parley/render_ui, sent once complete (a surface's first "
                               "messages together, once its tree has `root`)."),
    "tool_result": obj({"id": STRING, "status": TOOL_CALL_STATUS,
                        "result": {"oneOf": [TOOL_CALL_RESULT, {"type": "null"}]}}),
    "done": obj({"status": STATUS, "finish_reason": FINISH_REASON,
                 "usage": {"type": ["object", "null"], "required": ["input_tokens", "output_tokens", "estimated"],
                           "properties": {"input_tokens": nullable("integer"), "output_tokens": nullable("integer"),
                                          "estimated": BOOLEAN},
                           "description": "The message's `usage`, as GET /api/messages/{id} gives it: the "
                                          "provider's figures, or the estimate with `estimated` true."},
                 "patch": {"type": "array", "items": obj({"index": INTEGER, "html": STRING})},
                 "blocks": INTEGER}),
    "ready": obj({}), "resync": obj({}), "preferences_changed": obj({}),
    "conversation_created": obj({"conversation": SUMMARY}),
    "conversation_updated": obj({"conversation": SUMMARY}),
    "conversation_deleted": obj({"conversation_id": STRING}),
    "turn": obj({"conversation_id": STRING, "user_message_id": STRING, "assistant_message_id": STRING}),
    "reply_started": obj({"conversation_id": STRING, "message_id": STRING}),
    "reply_finished": obj({"conversation_id": STRING, "message_id": STRING, "status": STATUS}),
}


def event_stream(events, data_description):
    """`text/event-stream`: the schema is that of each event (as schemathesis and OpenAPI 3.2's itemSchema
    read it); comments (`: ping`, `: keep-alive`) are not events. `data` is JSON text: for each event name
    an `if`/`then` gives its `contentSchema` (JSON Schema 2020-12: an annotation, which
    Tests/openapi/conftest.py's `validate` applies to the decoded data)."""
    schema = {"type": "object", "required": ["data"],
              "properties": {"event": {"type": "string", "enum": events}, "id": STRING, "retry": INTEGER,
                             "data": {"type": "string", "description": data_description}}}
    if all(name in EVENT_DATA for name in events):
        schema["properties"]["data"]["contentMediaType"] = "application/json"
        schema["allOf"] = [{"if": {"properties": {"event": {"const": name}}},
                            "then": {"properties": {"data": {"contentSchema": EVENT_DATA[name]}}}}
                           for name in events]
    return {"text/event-stream": {"schema": schema}}


def json_content(schema):
    return {"application/json": {"schema": schema}}


ERROR = {"description": "An error: `{\"error\":{\"code\",\"message\"}}` (docs/api.md lists the statuses).",
         "content": json_content(ref("Error"))}
OPENAI_ERROR = {"description": "An error in OpenAI's shape.", "content": json_content(ref("OpenAIError"))}


def answer(status, description, schema=None, content=None):
    response = {"description": description}
    if schema is not None:
        response["content"] = json_content(schema)
    if content is not None:
        response["content"] = content
    return {str(status): response}


def path_id(name="id", what="id"):
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}, "description": what}


def query(name, schema, description):
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


# Both JSON exports: files by id only (`omit`), or with their bytes (default; 413 `export_too_large` past
# PARLEY_EXPORT_MAX_ATTACHMENT_BYTES).
ATTACHMENTS_QUERY = query("attachments", {"type": "string", "enum": ["embed", "omit"]},
                          "Default `embed`: files' bytes in base64, at most PARLEY_EXPORT_MAX_ATTACHMENT_BYTES "
                          "(413 `export_too_large` past it); `omit`: by id only.")


def body(schema, required=True):
    return {"required": required, "content": json_content(schema)}


def op(summary, tag, responses, parameters=(), request=None, public=False, errors=ERROR, **extra):
    operation = {"summary": summary, "tags": [tag], "responses": dict(responses, default=errors)}
    if parameters:
        operation["parameters"] = list(parameters)
    if request is not None:
        operation["requestBody"] = request
    if public:
        operation["security"] = []
    operation.update(extra)
    return operation


NO_CONTENT = answer(204, "Done; no body.")
# Changing credentials or accounts needs a signed-in person (the cookie, or a trusted proxy's sign-in):
# an API token gets 403 `session_required`, so a leaked one cannot keep itself alive or take over.
SESSION_ONLY = {"security": [{"sessionCookie": []}, {}],
                "description": "Needs a signed-in session: an API token gets 403 `session_required`."}


def refused(description, errors=ERROR):
    """A 429 (docs/api.md, Quotas): the error names its setting, `Retry-After` says when to retry."""
    return {"429": {"description": description,
                    "headers": {"Retry-After": {"description": "Whole seconds to wait before trying again.",
                                                "schema": {"type": "string", "pattern": "^[0-9]+$"}}},
                    "content": errors["content"]}}


TOO_MANY_STREAMS = refused("`too_many_streams`: the caller holds `PARLEY_MAX_STREAMS_PER_USER` streams "
                           "(`Retry-After: 5`); no stream was started.")
def errors(**statuses):
    """Error answers documented one by one: `errors(s400="...", s404="...")` (their body is `Error`)."""
    return {name[1:]: {"description": description, "content": ERROR["content"]}
            for name, description in statuses.items()}


TOOLS_BODY_FIELD = dict(TOOLS_FIELD, type=["array", "null"],
                        description="Tool ids (`<server>/<tool>`) and `<server>/*` from GET /api/tools; null or "
                                    "absent: unchanged (create: none); `[]` turns them all off. At most 128 entries "
                                    "of 1 to 200 characters (400 `invalid_request`); one the caller may not use "
                                    "is 400 `unknown_tool`.")
UNKNOWN_TOOL = errors(s400="`invalid_request` (a field the rules refuse), `unknown_tool` (a `tools` entry that names "
                           "no tool the caller may use), `unknown_model`.")
# A send's message: the body of POST /api/conversations/{id}/messages (with its `parent_id`), and the
# `message` of POST /api/conversations (without).
MESSAGE_FIELDS = {
    "content": {"type": "string", "description": "The message's text; may be empty (or absent) when "
                                                 "`attachments` has files."},
    "attachments": {"type": "array", "maxItems": 10, "items": {"type": "string", "minLength": 1, "maxLength": 64},
                    "description": "Ids of the caller's files (POST /api/files), at most PARLEY_MAX_ATTACHMENTS "
                                   "(10). Images go to the model as images (vision models only), documents as "
                                   "text."},
    "model": nullable("string"),
}
MESSAGE_NEEDS = [{"required": ["content"], "properties": {"content": {"minLength": 1}}},
                 {"required": ["attachments"], "properties": {"attachments": {"minItems": 1}}}]
FIRST_MESSAGE = {"anyOf": [dict(obj(MESSAGE_FIELDS, required=[], anyOf=MESSAGE_NEEDS),
                                description="The first message, started as a send would start it (its `model`: "
                                            "this reply's only). A refused start makes nothing."),
                           {"type": "null"}]}
CONVERSATION_BODY = obj(dict(SETTINGS_BODY, tools=TOOLS_BODY_FIELD, message=FIRST_MESSAGE), required=[],
                        examples=[{"title": "Trip plans", "model": "demo"},
                                  {"title": "Research", "tools": ["parley/search_history"]},
                                  {"title": "Hello", "message": {"content": "Hello"}}])
SERVABLE_MEDIA = ["image/png", "image/jpeg", "image/gif", "image/webp", "audio/mpeg", "audio/wav", "audio/ogg",
                  "audio/webm"]
DECISION_BODY = obj({"decision": {"type": "string", "enum": ["approve", "deny"]},
                     "remember": {"type": "boolean",
                                  "description": "With `approve`: always allow this tool from now on (default "
                                                 "false; ignored with `deny`)."}},
                    required=["decision"], examples=[{"decision": "approve"}, {"decision": "deny"},
                                                     {"decision": "approve", "remember": True}])

PATHS = {
    "/api/health": {"get": op("Liveness", "server", dict(
        answer(200, "The server answers.", ref("Health")),
        **answer(503, "Something the server needs does not answer (the PostgreSQL store, Redis with several "
                      "nodes): `down` names it.",
                 ref("HealthDown"))), public=True)},
    "/api/openapi.json": {"get": op("This document", "server", answer(
        200, "The OpenAPI document (the bytes of docs/openapi.json).", {"type": "object"}), public=True)},
    "/api/models": {"get": op("Models the caller may use", "conversations",
                              answer(200, "The models; ids are what `model` fields accept.", ref("ModelList")))},
    "/api/auth/login": {"post": op(
        "Sign in (team mode)", "accounts",
        answer(200, "Signed in; `Set-Cookie: parley_session=…`.", ref("Me")),
        request=body(obj({"username": STRING, "password": STRING})), public=True)},
    "/api/auth/logout": {"post": op("Sign out: the session ends", "accounts", NO_CONTENT)},
    "/api/auth/me": {"get": op("Who is calling (local mode: the implicit local user)", "accounts",
                               answer(200, "The caller.", ref("Me")))},
    "/api/auth/sessions": {"get": op("Your live sessions, newest first", "accounts",
                                     answer(200, "The sessions.", ref("SessionList")))},
    "/api/auth/sessions/{id}": {"delete": op("Revoke one of your sessions", "accounts", NO_CONTENT,
                                             parameters=[path_id(what="A session id of the caller's.")],
                                             **SESSION_ONLY)},
    "/api/auth/password": {"post": op("Change your password", "accounts", NO_CONTENT,
                                      request=body(obj({"current": STRING, "new": STRING})), **SESSION_ONLY)},
    "/api/tokens": {
        "post": op("Create an API token (its secret is shown once)", "accounts",
                   answer(201, "The token with its secret `token`.", ref("Token")),
                   request=body(obj({"name": STRING})), **SESSION_ONLY),
        "get": op("Your API tokens, never a secret", "accounts", answer(200, "The tokens.", ref("TokenList")))},
    "/api/tokens/{id}": {"delete": op("Revoke one of your API tokens", "accounts", NO_CONTENT,
                                      parameters=[path_id(what="A token id of the caller's.")], **SESSION_ONLY)},
    "/api/users": {
        "get": op("Every account (admins)", "admin", answer(200, "The users, oldest first.", ref("UserList"))),
        "post": op("Create an account (admins)", "admin", answer(201, "The new user.", ref("User")),
                   request=body(obj({"username": STRING, "password": STRING,
                                     "role": {"type": "string", "enum": ["admin", "member"]},
                                     "display_name": STRING}, required=["username", "password"])),
                   **SESSION_ONLY)},
    "/api/users/{id}": {"patch": op(
        "Change an account (admins)", "admin", answer(200, "The user.", ref("User")),
        parameters=[path_id(what="A user id.")],
        request=body(obj({"role": {"type": ["string", "null"], "enum": ["admin", "member", None]},
                          "disabled": nullable("boolean"), "password": nullable("string"),
                          "display_name": nullable("string")}, required=[])), **SESSION_ONLY)},
    "/api/users/{id}/usage": {"get": op("A user's counts and token totals, never content (admins)", "admin",
                                        answer(200, "The usage.", ref("UserUsage")),
                                        parameters=[path_id(what="A user id.")])},
    "/api/usage": {"get": op("Your tokens per UTC day and model", "usage",
                             answer(200, "The report.", ref("UsageReport")),
                             parameters=[query("from", {"type": "string", "format": "date"}, "First day (YYYY-MM-DD)."),
                                         query("to", {"type": "string", "format": "date"}, "Last day (YYYY-MM-DD).")])},
    "/api/preferences": {
        "get": op("Your preferences (defaults until changed)", "accounts", answer(200, "The preferences.", ref("Preferences"))),
        "patch": op("Change some of your preferences", "accounts",
                    answer(200, "The whole preferences after the change.", ref("Preferences")),
                    request=body(obj(PREFERENCE_FIELDS, required=[], additionalProperties=False,
                                     examples=[{"theme": "dark", "send_key": "ctrl_enter"}])),
                    description="Any subset of the fields; an unknown field or a bad value is a 400 "
                                "`invalid_request` naming the field, and nothing changes.")},
    "/api/conversations": {
        "post": op("Create a conversation (with `message`: and start its first turn)", "conversations",
                   {**answer(201, "Without `message`: the conversation. With it: the conversation and its first "
                                  "turn.", {"anyOf": [ref("Conversation"), ref("ConversationStart")]}),
                    **errors(s400="`invalid_request` (a field the rules refuse; the message's named "
                                  "`message.<field>`), `unknown_tool`, `unknown_model`, `model_cannot_see_images`.",
                             s404="`not_found`: a `message.attachments` id that is not a file of the caller's."),
                    **refused("`rate_limited`, `daily_budget_exhausted`, `too_many_generations`: the start is "
                              "refused and nothing is made.")},
                   request=body(CONVERSATION_BODY, required=False)),
        "get": op("List (or, with `q`, search) your conversations", "conversations",
                  answer(200, "A page of conversations, or search hits when `q` is given.",
                         {"anyOf": [ref("ConversationPage"), ref("SearchPage")]}),
                  parameters=[query("q", STRING, "Full-text search (FTS5 syntax)."),
                              query("limit", {"type": "integer", "minimum": 1, "maximum": 200}, "Page size (default 50)."),
                              query("cursor", STRING, "`next_cursor` of the previous page (not with `q`)."),
                              query("pinned", {"type": "boolean"}, "Only (un)pinned conversations."),
                              query("archived", {"type": "boolean"}, "`true` lists only archived ones.")])},
    "/api/conversations/{id}": {
        "get": op("A conversation with its current branch", "conversations",
                  answer(200, "The conversation with `messages`.", ref("ConversationWithMessages")),
                  parameters=[path_id()]),
        "patch": op("Change a conversation", "conversations",
                    {**answer(200, "The conversation.", ref("Conversation")), **UNKNOWN_TOOL,
                     **errors(s404="`not_found`: no such conversation of the caller's.")},
                    parameters=[path_id()],
                    request=body(obj(dict(SETTINGS_BODY, pinned=BOOLEAN, archived=BOOLEAN, tools=TOOLS_BODY_FIELD),
                                     required=[]))),
        "delete": op("Delete a conversation and its messages", "conversations", NO_CONTENT, parameters=[path_id()])},
    "/api/conversations/{id}/current": {"put": op(
        "Switch branch", "conversations",
        answer(200, "The conversation with its new branch.", ref("ConversationWithMessages")),
        parameters=[path_id()], request=body(obj({"message_id": STRING})))},
    "/api/conversations/{id}/fork": {"post": op(
        "Fork at a message into a new conversation", "conversations",
        answer(201, "The new conversation with its branch.", ref("ConversationWithMessages")),
        parameters=[path_id()], request=body(obj({"message_id": STRING, "title": TITLE}, required=["message_id"])))},
    "/api/conversations/{id}/export": {"get": op(
        "Export a conversation", "export",
        answer(200, "`json`: the whole tree; `md`: the current branch as Markdown.", content={
            "application/json": {"schema": ref("ConversationExport")},
            "text/markdown": {"schema": {"type": "string"}}}),
        parameters=[path_id(), query("format", {"type": "string", "enum": ["json", "md"]}, "Default `json`."),
                    ATTACHMENTS_QUERY])},
    "/api/export": {"get": op("Export every conversation of yours (streamed)", "export",
                              {**answer(200, "The export document.", ref("FullExport")),
                               **refused("`too_many_exports`: the caller runs `PARLEY_MAX_EXPORTS_PER_USER` exports "
                                         "(`Retry-After: 2`).")},
                              parameters=[ATTACHMENTS_QUERY])},
    "/api/import": {"post": op(
        "Import an export (one conversation or all), in one transaction", "export",
        answer(201, "The new conversations, in the document's order.", ref("ImportResult")),
        request=body({"anyOf": [ref("ConversationExport"), ref("FullExport")]}))},
    "/api/conversations/{id}/messages": {"post": op(
        "Send a message; its reply starts streaming", "messages",
        {**answer(201, "The user message (its files as `file` parts) and the assistant message (`streaming`).",
                  ref("Turn")),
         **errors(s400="`invalid_request` (no `content` and no `attachments`, more than PARLEY_MAX_ATTACHMENTS "
                       "files...), `invalid_parent`, `unknown_model`, `model_cannot_see_images`: an image is "
                       "attached and the model is not in PARLEY_VISION_MODELS.",
                  s404="`not_found`: no such conversation, or an `attachments` id that is not a file of the "
                       "caller's (or one deleted).")},
        parameters=[path_id()],
        request=body(obj(dict(MESSAGE_FIELDS, parent_id=nullable("string")), required=[],
                         anyOf=MESSAGE_NEEDS,
                         examples=[{"content": "Hello"},
                                   {"content": "What is in this picture?", "attachments": ["f_0123456789abcdef"]}])))},
    "/api/messages/{id}": {"get": op("A message", "messages", answer(200, "The message.", ref("Message")),
                                     parameters=[path_id()])},
    "/api/messages/{id}/stream": {"get": op(
        "A message's events (live or finished)", "messages",
        {**answer(200, "Server-sent events: snapshot, reasoning, block, tail, tail_append, tail_html, delta, "
                       "tool_call, tool_call_delta, tool_result, error, done (docs/api.md, The event stream). "
                       "`done` ends a run: a reply `awaiting_approval` or `stopped` may go on later, its events "
                       "then numbered above it.",
                  content=event_stream(REPLY_EVENTS, "A JSON object (docs/api.md, The event stream).")),
         **TOO_MANY_STREAMS},
        parameters=[path_id(), query("mode", {"type": "string", "enum": ["html", "text"]}, "`text`: raw deltas."),
                    query("last_event_id", STRING, "Resume after this event id.")])},
    "/api/messages/{id}/stop": {"post": op("Stop a reply", "messages",
                                           answer(200, "The message, never `streaming`.", ref("Message")),
                                           parameters=[path_id()])},
    "/api/messages/{id}/regenerate": {"post": op(
        "A new reply beside this one", "messages", answer(201, "The new assistant message.", ref("Message")),
        parameters=[path_id()], request=body(obj({"model": nullable("string")}, required=[]), required=False))},
    "/api/messages/{id}/continue": {"post": op(
        "Continue a reply (or resume one whose tool calls are all decided)", "messages",
        {**answer(200, "The same message, `streaming` again.", ref("Message")),
         **errors(s409="`already_streaming`; `awaiting_approval`: a tool call still waits for a decision.")},
        parameters=[path_id()])},
    "/api/messages/{id}/tool_calls/{call_id}": {"post": op(
        "Approve or deny a tool call that waits", "tools",
        {**answer(200, "The message. When this was the last undecided call, the reply resumes like a continue: "
                       "the message is `streaming` again (reopen its stream from the last event id).",
                  ref("Message")),
         **errors(s400="`invalid_request`: `decision` is not `approve` or `deny`, `remember` not a boolean.",
                  s403="`model_not_allowed`: resuming is refused (the decisions stay; POST …/continue resumes "
                       "later).",
                  s404="`not_found`: no such message of the caller's, or no call with that id in it.",
                  s409="`conflict`: the message is not `awaiting_approval`, or the call was decided already."),
         **refused("Resuming is refused (`rate_limited`, `daily_budget_exhausted`, `too_many_generations`): the "
                   "decisions stay recorded; POST /api/messages/{id}/continue resumes later.")},
        parameters=[path_id(), path_id("call_id", "A tool call's `id` (its part's, not `provider_id`).")],
        request=body(DECISION_BODY))},
    "/api/messages/{id}/surfaces/{surface_id}/actions": {"post": op(
        "Send a surface's action: the next user turn, and its reply", "messages",
        {**answer(201, "The user message (its part is the action) and the assistant message (`streaming`), as "
                       "a send answers.", ref("Turn")),
         **errors(s400="`invalid_request`, `invalid_json`: not an action (or envelope), or its `surfaceId` is not "
                       "the path's; `unknown_surface`: the message drew no such surface, is not on the current "
                       "branch, or the surface was never shown; `unknown_component`: no such component in the "
                       "surface's state on the branch.",
                  s404="`not_found`: no such message of the caller's.",
                  s409="`surface_deleted`: the surface was deleted on the branch.",
                  s413="`too_large`: over PARLEY_SURFACE_MAX_ACTION_BYTES."),
         **refused("Refused like a send (`rate_limited`, `daily_budget_exhausted`, `too_many_generations`).")},
        parameters=[path_id(), path_id("surface_id", "The surface's `surfaceId`.")],
        request=body({"oneOf": [A2UI_ACTION, obj({"version": {"const": "v0.9"}, "action": A2UI_ACTION},
                                                 additionalProperties=False)],
                      "examples": [{"name": "book", "surfaceId": "trip", "sourceComponentId": "go",
                                    "timestamp": "2026-12-05T08:00:00Z", "context": {"name": "Ada"}}]}))},
    "/api/messages/{id}/tool_calls/{call_id}/content/{index}": {"get": op(
        "The bytes of an image or audio item of a tool call's result", "tools",
        {**answer(200, "The item's bytes, with its media type, `X-Content-Type-Options: nosniff` and "
                       "`Content-Security-Policy: default-src 'none'; sandbox`.",
                  content={media: {"schema": {"type": "string", "contentMediaType": media}}
                           for media in SERVABLE_MEDIA}),
         **errors(s400="`invalid_request`: `index` is not a non-negative integer.",
                  s404="`not_found`: no such message, call or item, or the item is not a raster image or audio "
                       "of a type served (PNG, JPEG, GIF, WebP; MPEG, WAV, Ogg, WebM).")},
        parameters=[path_id(), path_id("call_id", "A tool call's `id`."),
                    path_id("index", "The item's index in the result's `content`, from 0.")])},
    "/api/files": {
        "post": op(
            "Upload a file", "files",
            {**answer(201, "The new file.", ref("File")),
             **answer(200, "The caller already has a file of these bytes: that file (same id), unchanged.",
                      ref("File")),
             **errors(s400="`empty_file`, `image_too_large` (too many pixels), `too_many_pages` (a PDF past "
                           "PARLEY_PDF_MAX_PAGES), `invalid_text` (not UTF-8, or a .json file that does not parse), "
                           "`invalid_file` (cannot be read), `missing_file` / `multiple_files` (multipart without "
                           "or with several `file` fields), `invalid_multipart`.",
                      s413="`payload_too_large`: the file is over PARLEY_MAX_FILE_BYTES (a declared length is "
                           "refused before the body is read); `quota_exceeded`: the caller's files would pass "
                           "PARLEY_MAX_USER_FILE_BYTES.",
                      s415="`unsupported_file`: not a PNG, JPEG, GIF or WebP image, a PDF, or UTF-8 text.",
                      s507="`insufficient_storage`: no disk room for the upload now."),
             "503": {"description": "`busy`: too many uploads (PARLEY_MAX_UPLOADS) or files being processed at "
                                    "once; `Retry-After: 1`.",
                     "headers": {"Retry-After": {"description": "Whole seconds to wait.",
                                                 "schema": {"type": "string", "pattern": "^[0-9]+$"}}},
                     "content": ERROR["content"]}},
            parameters=[query("filename", {"type": "string", "maxLength": 255},
                              "A raw body's name (multipart: the part's own filename). Its extension decides a "
                              "text file's type (.md, .csv, .json).")],
            request={"required": True, "content": {
                "multipart/form-data": {"schema": obj({"file": dict(BINARY, description="The file, with its "
                                                                                         "filename.")}),
                                        "encoding": {"file": {"contentType": "application/octet-stream"}}},
                "application/octet-stream": {"schema": dict(BINARY, description="The body is the file (any "
                                                                                "Content-Type but multipart; "
                                                                                "its type is decided from the "
                                                                                "bytes).")}}},
            description="Images are re-encoded for providers (longest edge PARLEY_IMAGE_MAX_EDGE, at most "
                        "PARLEY_IMAGE_MAX_BYTES) and get a thumbnail; a PDF's text is extracted; text must be "
                        "UTF-8. The same bytes uploaded again by the same caller answer 200 with the same id."),
        "get": op("Your files, newest first", "files", answer(200, "A page of files.", ref("FilePage")),
                  parameters=[query("limit", {"type": "integer", "minimum": 1, "maximum": 200}, "Page size (default 50)."),
                              query("cursor", STRING, "`next_cursor` of the previous page.")])},
    "/api/files/{id}": {
        "get": op(
            "A file's bytes, a range of them, or its thumbnail", "files",
            {**answer(200, "The stored bytes with their media type (text with `; charset=utf-8`), "
                           "`Content-Disposition: inline` for images and `attachment` otherwise (with the "
                           "filename), `Accept-Ranges: bytes`, `Content-Security-Policy: default-src 'none'; "
                           "sandbox` and `X-Content-Type-Options: nosniff`. With `variant=thumb`: a small JPEG "
                           "(PNG when the image has transparency).",
                      content={**{media: {"schema": dict(BINARY, contentMediaType=media)} for media in FILE_MEDIA},
                               "application/json": {"schema": {"description": "A JSON file's own bytes."}}}),
             "206": {"description": "One range of the bytes (`Range: bytes=…`), with `Content-Range`.",
                     "headers": {"Content-Range": {"description": "`bytes first-last/size`.",
                                                   "schema": {"type": "string"}}},
                     "content": {**{media: {"schema": dict(BINARY, contentMediaType=media)} for media in FILE_MEDIA},
                                 "application/json": {"schema": {"description": "A JSON file's own bytes."}}}},
             "416": {"description": "`range_not_satisfiable`: the range starts past the end; `Content-Range: "
                                    "bytes */size`.",
                     "headers": {"Content-Range": {"description": "`bytes */size`.", "schema": {"type": "string"}}},
                     "content": ERROR["content"]},
             **errors(s400="`invalid_request`: `variant` is not `thumb`.",
                      s404="`not_found`: no such file of the caller's, or (`variant=thumb`) it has no thumbnail.")},
            parameters=[path_id(what="A file id of the caller's."),
                        query("variant", {"type": "string", "enum": ["thumb"]},
                              "`thumb`: the image's thumbnail (at most 256 px); documents have none (404)."),
                        {"name": "Range", "in": "header", "required": False, "schema": {"type": "string"},
                         "description": "One range, `bytes=first-last`, `bytes=first-` or `bytes=-suffix`: "
                                        "answered 206; several ranges or another unit: the whole file (200)."}]),
        "delete": op(
            "Delete a file", "files",
            {**answer(200, "Deleted, or, while messages still show it, hidden from your files and no longer "
                           "attachable but kept for them (`deleted: false`).", ref("FileDeletion")),
             **errors(s404="`not_found`: no such file of the caller's.")},
            parameters=[path_id(what="A file id of the caller's.")])},
    "/api/tools": {"get": op("The tools you may enable on a conversation", "tools",
                             answer(200, "Every tool the caller may use, by id; an unavailable server's marked "
                                         "`available: false`.", ref("ToolList")))},
    "/api/tool_policies": {
        "get": op("Your \"always allow\" tools", "tools",
                  answer(200, "The caller's remembered tools, by tool id.", ref("ToolPolicyList"))),
        "delete": op("Take an \"always allow\" back", "tools",
                     {**NO_CONTENT,
                      **errors(s400="`invalid_request`: `tool` is missing, empty or over 200 characters.",
                               s404="`not_found`: the caller has no policy for that tool.")},
                     parameters=[{"name": "tool", "in": "query", "required": True,
                                  "schema": {"type": "string", "minLength": 1, "maxLength": 200},
                                  "description": "The tool id (`<server>/<tool>`)."}])},
    "/api/events": {"get": op(
        "The caller's notifications and, with `follow`, one reply's events", "events",
        {**answer(200, "Server-sent events: ready, conversation_created, conversation_updated, "
                       "conversation_deleted, turn, reply_started, reply_finished, preferences_changed, resync and "
                       "the followed reply's events (docs/api.md, The user event stream).",
                  content=event_stream(USER_EVENTS, "A JSON object (docs/api.md, The user event stream).")),
         **TOO_MANY_STREAMS},
        parameters=[query("follow", STRING, "A message id of the caller's."),
                    query("mode", {"type": "string", "enum": ["html", "text"]}, "For the followed reply."),
                    query("last_event_id", STRING, "`S`, `S.R` or `S.done`.")])},
    "/v1/models": {"get": op("OpenAI-compatible model list", "openai",
                             answer(200, "The models the caller may use.", ref("OpenAIModelList")),
                             errors=OPENAI_ERROR)},
    "/v1/chat/completions": {"post": op(
        "OpenAI-compatible chat completion (stored as a conversation of the caller's)", "openai",
        {**answer(200, "A `chat.completion`, or with `stream` `chat.completion.chunk` events then `data: [DONE]`.",
                  content=dict(json_content(ref("OpenAIChatCompletion")), **event_stream(
                      ["message"], "A chat.completion.chunk object as JSON, an error object, or `[DONE]` last."))),
         **refused("A quota or cap (`rate_limited`, `daily_budget_exhausted`, `too_many_generations`, "
                   "`too_many_streams` for a `stream` call at `PARLEY_MAX_STREAMS_PER_USER`); nothing was stored.",
                   errors=OPENAI_ERROR)},
        parameters=[{"name": "X-Parley-Conversation", "in": "header", "required": False,
                     "schema": {"type": "string"}, "description": "Append the call to this conversation of yours."}],
        request=body(ref("OpenAIChatRequest")), errors=OPENAI_ERROR)},
}

DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Parley", "version": "1",
             "description": "Parley's HTTP API (docs/api.md is the reference). JSON in, JSON out: a request "
                            "with a body must send `Content-Type: application/json` (but POST /api/files, which "
                            "takes a file as multipart/form-data or as the raw body). In local mode no "
                            "credentials are needed; in team mode every route but health, this document and "
                            "sign-in needs the `parley_session` cookie or an API token as `Authorization: "
                            "Bearer pt_…` (other `Authorization` schemes are ignored). Another user's ids "
                            "answer 404 like ids that do not exist. Every answer of an API route, errors and "
                            "event streams too, is `Cache-Control: no-store`."},
    "servers": [{"url": "/"}],
    "security": [{"sessionCookie": []}, {"apiToken": []}, {}],
    "tags": [{"name": n} for n in ("server", "accounts", "admin", "usage", "conversations", "export",
                                     "messages", "files", "tools", "events", "openai")],
    "paths": PATHS,
    "components": {
        "securitySchemes": {
            "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "parley_session",
                              "description": "Set by POST /api/auth/login (team mode)."},
            "apiToken": {"type": "http", "scheme": "bearer",
                         "description": "A Parley API token (POST /api/tokens), `pt_…`."}},
        "schemas": SCHEMAS},
}


def document_text():
    return json.dumps(DOCUMENT, indent=1, ensure_ascii=False) + "\n"


def main():
    text = document_text()
    (ROOT / "docs/openapi.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
