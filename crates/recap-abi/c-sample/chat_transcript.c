/*
 * chat-transcript: a recap strategy plugin written in C for chat-form sessions
 * (ABI 1.1).
 *
 * Renders SYSTEM(system prompt), USER(mission), then every message of the chat
 * history in order: each turn's assistant response (with its tool calls) and each
 * observation (tool results, user messages). It declares the chat form only, through
 * `describe`, so recap never sends it a PTC-Lisp session.
 *
 * It shows the chat side of the ABI without a JSON library: the turns of the request
 * are already in the shape of messages. An assistant response
 * {"content": ..., "tool_calls": [...]} becomes a message by adding its role, and an
 * observation {"role": "tool", "tool_call_id": ..., "content": ...} is a message as it
 * stands (recap ignores the fields a message does not have, such as "is_error").
 * Strings are copied as they are, escapes and all.
 *
 * Build: cc -std=c99 -shared -fPIC -I../include -o libchat_transcript.so chat_transcript.c
 * Use:   recap plugins check ./libchat_transcript.so
 *
 * The scanner below walks the top-level object and skips values it does not need; it
 * checks structure only as far as it must. A real plugin should use a JSON parser.
 */
#include "recap_strategy.h"

#include <stdlib.h>
#include <string.h>

static const char NAME[] = "chat-transcript";
static const char VERSION[] = "0.1.0";

static const char DESCRIPTION[] =
    "{\"name\":\"chat-transcript\",\"version\":\"0.1.0\","
    "\"summary\":\"chat form: every message of the history (a C sample plugin)\","
    "\"spec\":\"chat-transcript\",\"options\":[],"
    "\"invariants\":[{\"id\":\"system-first\"},{\"id\":\"mission-verbatim\"},"
    "{\"id\":\"mission-leads-first-user\"},{\"id\":\"role-alternation\"},"
    "{\"id\":\"deterministic\"},{\"id\":\"append-only\"}],"
    "\"forms\":[\"chat\"]}";

typedef struct {
    uint8_t *ptr;
    size_t len, cap;
    int failed;
} Out;

static void put(Out *o, const void *bytes, size_t n) {
    if (o->failed) return;
    if (o->len + n > o->cap) {
        size_t cap = (o->cap ? o->cap * 2 : 1024);
        while (cap < o->len + n) cap *= 2;
        uint8_t *p = realloc(o->ptr, cap);
        if (!p) { o->failed = 1; return; }
        o->ptr = p;
        o->cap = cap;
    }
    memcpy(o->ptr + o->len, bytes, n);
    o->len += n;
}

static void put_str(Out *o, const char *s) { put(o, s, strlen(s)); }

/* A slice of the request: [start, end). */
typedef struct {
    size_t start, end;
} Span;

#define BAD ((size_t)-1)

static size_t skip_ws(const uint8_t *j, size_t len, size_t i) {
    while (i < len && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r')) i++;
    return i;
}

/* From an opening quote to past the closing one. */
static size_t skip_string(const uint8_t *j, size_t len, size_t i) {
    if (i >= len || j[i] != '"') return BAD;
    for (i++; i < len; i++) {
        if (j[i] == '\\') { i++; continue; }
        if (j[i] == '"') return i + 1;
    }
    return BAD;
}

/* Past one value (string, object, array, number or literal). */
static size_t skip_value(const uint8_t *j, size_t len, size_t i) {
    i = skip_ws(j, len, i);
    if (i >= len) return BAD;
    if (j[i] == '"') return skip_string(j, len, i);
    if (j[i] == '{' || j[i] == '[') {
        int depth = 0;
        while (i < len) {
            if (j[i] == '"') {
                i = skip_string(j, len, i);
                if (i == BAD) return BAD;
                continue;
            }
            if (j[i] == '{' || j[i] == '[') depth++;
            if (j[i] == '}' || j[i] == ']') {
                depth--;
                if (depth == 0) return i + 1;
            }
            i++;
        }
        return BAD;
    }
    while (i < len && j[i] != ',' && j[i] != '}' && j[i] != ']' && j[i] != ' ' &&
           j[i] != '\n' && j[i] != '\r' && j[i] != '\t')
        i++;
    return i;
}

/* Iterates the members of the object starting at *i (first call: at its '{').
 * On each member sets *key (quotes excluded) and *value; returns 0 at the end of the
 * object (*i then past its '}'), -1 on malformed input. */
static int next_member(const uint8_t *j, size_t len, size_t *i, Span *key, Span *value) {
    size_t p = skip_ws(j, len, *i);
    if (p >= len) return -1;
    if (j[p] == '{' || j[p] == ',') p = skip_ws(j, len, p + 1);
    if (p < len && j[p] == '}') { *i = p + 1; return 0; }
    size_t k_end = skip_string(j, len, p);
    if (k_end == BAD) return -1;
    key->start = p + 1;
    key->end = k_end - 1;
    p = skip_ws(j, len, k_end);
    if (p >= len || j[p] != ':') return -1;
    p = skip_ws(j, len, p + 1);
    size_t v_end = skip_value(j, len, p);
    if (v_end == BAD) return -1;
    value->start = p;
    value->end = v_end;
    *i = skip_ws(j, len, v_end);
    return 1;
}

/* Iterates the items of the array starting at *i (first call: at its '['); like
 * next_member. */
static int next_item(const uint8_t *j, size_t len, size_t *i, Span *item) {
    size_t p = skip_ws(j, len, *i);
    if (p >= len) return -1;
    if (j[p] == '[' || j[p] == ',') p = skip_ws(j, len, p + 1);
    if (p < len && j[p] == ']') { *i = p + 1; return 0; }
    size_t end = skip_value(j, len, p);
    if (end == BAD) return -1;
    item->start = p;
    item->end = end;
    *i = skip_ws(j, len, end);
    return 1;
}

static int key_is(const uint8_t *j, Span key, const char *name) {
    size_t n = strlen(name);
    return key.end - key.start == n && memcmp(j + key.start, name, n) == 0;
}

/* The assistant response {"content": ..., ...} as a message: its members after a role. */
static void put_assistant(Out *o, const uint8_t *j, Span obj) {
    size_t inner = skip_ws(j, obj.end, obj.start + 1);
    put_str(o, "{\"role\":\"assistant\"");
    if (j[inner] != '}') {
        put_str(o, ",");
        put(o, j + inner, obj.end - inner);
    } else {
        put_str(o, "}");
    }
}

/* Every message of every turn; 0 on malformed input. */
static int put_turns(Out *o, const uint8_t *j, Span turns) {
    size_t t = turns.start;
    Span turn;
    int r;
    while ((r = next_item(j, turns.end, &t, &turn)) == 1) {
        if (j[turn.start] != '{') return 0;
        size_t m = turn.start;
        Span key, value, assistant = {0, 0}, observations = {0, 0};
        int s;
        while ((s = next_member(j, turn.end, &m, &key, &value)) == 1) {
            if (key_is(j, key, "assistant")) assistant = value;
            if (key_is(j, key, "observations")) observations = value;
        }
        if (s < 0 || assistant.end == 0 || j[assistant.start] != '{') return 0;
        put_str(o, ",");
        put_assistant(o, j, assistant);
        if (observations.end != 0 && j[observations.start] == '[') {
            size_t p = observations.start;
            Span obs;
            while ((s = next_item(j, observations.end, &p, &obs)) == 1) {
                put_str(o, ",");
                put(o, j + obs.start, obs.end - obs.start);
            }
            if (s < 0) return 0;
        }
    }
    return r == 0;
}

static int32_t answer(RecapBuf *out, Out *o, int32_t status) {
    if (o->failed) {
        free(o->ptr);
        out->ptr = NULL;
        out->len = out->cap = 0;
        return RECAP_STATUS_ERROR;
    }
    out->ptr = o->ptr;
    out->len = o->len;
    out->cap = o->cap;
    return status;
}

static int32_t render(const uint8_t *request, size_t request_len, RecapBuf *out) {
    Out o = {0};
    size_t i = skip_ws(request, request_len, 0);
    Span key, value, system = {0, 0}, mission = {0, 0}, form = {0, 0}, turns = {0, 0};
    int r = -1;
    if (i < request_len && request[i] == '{') {
        while ((r = next_member(request, request_len, &i, &key, &value)) == 1) {
            if (key_is(request, key, "system_prompt")) system = value;
            else if (key_is(request, key, "mission")) mission = value;
            else if (key_is(request, key, "form")) form = value;
            else if (key_is(request, key, "turns")) turns = value;
        }
    }
    if (r != 0 || system.end == 0 || mission.end == 0 || request[system.start] != '"' ||
        request[mission.start] != '"') {
        put_str(&o, "{\"error\":{\"kind\":\"bad_request\",\"message\":"
                    "\"the request has no system_prompt or mission string\"}}");
        return answer(out, &o, RECAP_STATUS_BAD_REQUEST);
    }
    if (form.end - form.start != 6 || memcmp(request + form.start, "\"chat\"", 6) != 0) {
        put_str(&o, "{\"error\":{\"kind\":\"unsupported_form\",\"message\":"
                    "\"chat-transcript renders chat sessions only\"}}");
        return answer(out, &o, RECAP_STATUS_ERROR);
    }
    put_str(&o, "{\"messages\":[{\"role\":\"system\",\"content\":");
    put(&o, request + system.start, system.end - system.start);
    put_str(&o, "},{\"role\":\"user\",\"content\":");
    put(&o, request + mission.start, mission.end - mission.start);
    put_str(&o, "}");
    if (turns.end != 0 && request[turns.start] == '[' && !put_turns(&o, request, turns)) {
        o.len = 0;
        put_str(&o, "{\"error\":{\"kind\":\"bad_request\",\"message\":"
                    "\"a turn is not in the chat form\"}}");
        return answer(out, &o, RECAP_STATUS_BAD_REQUEST);
    }
    put_str(&o, "]}");
    return answer(out, &o, RECAP_STATUS_OK);
}

/* One strategy instance, no options: the description is the same for every request. */
static int32_t describe(const uint8_t *request, size_t request_len, RecapBuf *out) {
    (void)request;
    (void)request_len;
    Out o = {0};
    put_str(&o, DESCRIPTION);
    return answer(out, &o, RECAP_STATUS_OK);
}

static void free_buffer(RecapBuf buf) { free(buf.ptr); }

static const RecapStrategyPluginV1 DESCRIPTOR = {
    RECAP_PLUGIN_MAGIC,
    sizeof(RecapStrategyPluginV1),
    RECAP_ABI_MAJOR,
    RECAP_ABI_MINOR,
    {(const uint8_t *)NAME, sizeof NAME - 1},
    {(const uint8_t *)VERSION, sizeof VERSION - 1},
    render,
    free_buffer,
    describe, /* declares the chat form */
    NULL,     /* no incremental sessions: recap sends full requests */
    NULL,
    NULL,
};

uint32_t recap_strategy_abi_version(void) { return RECAP_ABI_MAJOR; }

const RecapStrategyPluginV1 *recap_strategy_plugin_v1(void) { return &DESCRIPTOR; }
