/*
 * mission-only: a recap strategy plugin written in C.
 *
 * Renders [SYSTEM(system prompt), USER(mission)] for every call, ignoring the
 * history: the "no memory at all" baseline. It shows the whole C side of the ABI —
 * probe, descriptor, render, free — in a few dozen lines, without a JSON library.
 *
 * Build: cc -std=c99 -shared -fPIC -I../include -o libmission_only.so mission_only.c
 * Use:   recap plugins check ./libmission_only.so
 *
 * The request scanner is deliberately tiny: it takes the first `"system_prompt":` and
 * `"mission":` keys, which recap writes before any nested object. A real plugin should
 * use a JSON parser.
 */
#include "recap_strategy.h"

#include <stdlib.h>
#include <string.h>

static const char NAME[] = "mission-only";
static const char VERSION[] = "0.1.0";

typedef struct {
    uint8_t *ptr;
    size_t len, cap;
    int failed;
} Out;

static void put(Out *o, const void *bytes, size_t n) {
    if (o->failed) return;
    if (o->len + n > o->cap) {
        size_t cap = (o->cap ? o->cap * 2 : 256);
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

/* Finds the JSON string token after the first `"key":`; sets [*start, *end) to it,
 * quotes included (it is copied verbatim into the response, escapes and all). */
static int find_string(const uint8_t *json, size_t len, const char *key,
                       size_t *start, size_t *end) {
    size_t klen = strlen(key);
    for (size_t i = 0; i + klen + 3 <= len; i++) {
        if (json[i] != '"' || memcmp(json + i + 1, key, klen) != 0 ||
            json[i + 1 + klen] != '"')
            continue;
        size_t j = i + klen + 2;
        while (j < len && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r')) j++;
        if (j >= len || json[j] != ':') continue;
        j++;
        while (j < len && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r')) j++;
        if (j >= len || json[j] != '"') return 0;
        *start = j;
        for (j++; j < len; j++) {
            if (json[j] == '\\') { j++; continue; }
            if (json[j] == '"') { *end = j + 1; return 1; }
        }
        return 0;
    }
    return 0;
}

static int32_t render(const uint8_t *request, size_t request_len, RecapBuf *out) {
    Out o = {0};
    size_t s0, s1, m0, m1;
    int32_t status = RECAP_STATUS_OK;
    if (find_string(request, request_len, "system_prompt", &s0, &s1) &&
        find_string(request, request_len, "mission", &m0, &m1)) {
        put_str(&o, "{\"messages\":[{\"role\":\"system\",\"content\":");
        put(&o, request + s0, s1 - s0);
        put_str(&o, "},{\"role\":\"user\",\"content\":");
        put(&o, request + m0, m1 - m0);
        put_str(&o, "}]}");
    } else {
        put_str(&o, "{\"error\":{\"kind\":\"bad_request\",\"message\":"
                    "\"the request has no system_prompt or mission string\"}}");
        status = RECAP_STATUS_BAD_REQUEST;
    }
    if (o.failed) {
        free(o.ptr);
        out->ptr = NULL;
        out->len = out->cap = 0;
        return RECAP_STATUS_ERROR;
    }
    out->ptr = o.ptr;
    out->len = o.len;
    out->cap = o.cap;
    return status;
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
    NULL, /* describe: no options */
    NULL, /* no incremental sessions: recap sends full requests */
    NULL,
    NULL,
};

uint32_t recap_strategy_abi_version(void) { return RECAP_ABI_MAJOR; }

const RecapStrategyPluginV1 *recap_strategy_plugin_v1(void) { return &DESCRIPTOR; }
