/* SPDX-License-Identifier: MIT */
/*
 * negotiate.c - iSCSI text keys and operational parameter negotiation.
 *
 * RFC 7143 6.1 (text format: key=value pairs, each NUL-terminated, keys up to
 * 63 bytes), 6.2 (negotiation: list and simple-value keys, the special
 * answers NotUnderstood, Irrelevant and Reject, 6.2.1), 6.2.2 (result
 * functions: boolean AND / OR, numerical min / max, declarative keys) and
 * section 13 (every operational key with its range and default). The target
 * runs at ErrorRecoveryLevel 0 with MaxConnections 1 and insists on in-order
 * data PDUs and sequences; every other choice follows the initiator within
 * the limits in iscsi_internal.h.
 */
#include "iscsi_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frees a key list. */
void kv_free(struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Appends key=value (both copied); returns 0 or -ENOMEM. */
int kv_add(struct kvlist *l, const char *key, const char *value)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct kv *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	char *k = strdup(key), *val = strdup(value);
	if (!k || !val) {
		free(k);
		free(val);
		return -ENOMEM;
	}
	l->v[l->n].key = k;
	l->v[l->n].value = val;
	l->n++;
	return 0;
}

/* The value of key, or NULL. */
const char *kv_get(const struct kvlist *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

/*
 * Parses a data segment of NUL-separated key=value pairs (RFC 7143 6.1).
 * Returns 0, or -EINVAL for a malformed pair (no '=', empty or long key).
 */
int kv_parse(const uint8_t *text, size_t len, struct kvlist *out)
{
	size_t i = 0;

	while (i < len) {
		const char *s = (const char *)text + i;
		size_t n = strnlen(s, len - i);
		if (n == 0) { /* stray NULs (padding) */
			i++;
			continue;
		}
		const char *eq = memchr(s, '=', n);
		if (!eq || eq == s || (size_t)(eq - s) > ISCSI_KEY_MAX)
			return -EINVAL;
		char key[ISCSI_KEY_MAX + 1];
		memcpy(key, s, (size_t)(eq - s));
		key[eq - s] = 0;
		char *value = strndup(eq + 1, n - (size_t)(eq - s) - 1);
		if (!value)
			return -ENOMEM;
		int err = kv_add(out, key, value);
		free(value);
		if (err)
			return err;
		i += n + 1;
	}
	return 0;
}

/* Serialises a key list into a malloc'ed data segment. */
uint8_t *kv_serialize(const struct kvlist *l, uint32_t *len)
{
	size_t total = 0;

	for (size_t i = 0; i < l->n; i++)
		total += strlen(l->v[i].key) + 1 + strlen(l->v[i].value) + 1;
	uint8_t *buf = malloc(total ? total : 1), *p = buf;
	if (!buf) {
		*len = 0;
		return NULL;
	}
	for (size_t i = 0; i < l->n; i++)
		p += sprintf((char *)p, "%s=%s", l->v[i].key, l->v[i].value) + 1;
	*len = (uint32_t)total;
	return buf;
}

/* RFC 7143 section 13 defaults (what holds when a key is never negotiated). */
void params_default(struct iscsi_params *p)
{
	p->header_digest = p->data_digest = false;
	p->initial_r2t = true;
	p->immediate_data = true;
	p->data_pdu_in_order = p->data_seq_in_order = true;
	p->max_recv_dsl = 8192;
	p->max_burst = 262144;
	p->first_burst = 65536;
	p->max_outstanding_r2t = 1;
	p->time2wait = 2;
	p->time2retain = 20;
	p->erl = 0;
	p->max_connections = 1;
}

/* True for keys of the security negotiation stage (RFC 7143 12). */
bool key_is_security(const char *key)
{
	return !strcmp(key, "AuthMethod") || !strncmp(key, "CHAP_", 5) ||
	       !strncmp(key, "SRP_", 4) || !strncmp(key, "KRB_", 4) || !strncmp(key, "SPKM_", 5);
}

/* Parses a numerical value (decimal, or 0x hex; RFC 7143 5.1); -1 if bad. */
static int parse_num(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long long x;

	if (!*v || *v == '-' || *v == '+')
		return -1;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* Parses Yes / No (RFC 7143 5.1: boolean-value). */
static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "Yes"))
		*out = true;
	else if (!strcmp(v, "No"))
		*out = false;
	else
		return -1;
	return 0;
}

/* Picks the first digest of the initiator's list we support (list-value, 6.2.1). */
static const char *pick_digest(const char *list, bool *crc)
{
	char buf[ISCSI_VALUE_MAX + 1];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "None")) {
			*crc = false;
			return "None";
		}
		if (!strcmp(tok, "CRC32C")) {
			*crc = true;
			return "CRC32C";
		}
	}
	return NULL;
}

/* Keys that a discovery session answers with Irrelevant (RFC 7143 13.x "Irrelevant when"). */
static bool irrelevant_in_discovery(const char *key)
{
	static const char *const keys[] = {
	    "MaxConnections",	"InitialR2T",	     "ImmediateData",  "MaxBurstLength",
	    "FirstBurstLength", "MaxOutstandingR2T", "DataPDUInOrder", "DataSequenceInOrder"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* Our own limits (the target's side of each result function). */
#define OUR_MAX_BURST (1024u * 1024)
#define OUR_FIRST_BURST (256u * 1024)
#define OUR_TIME2WAIT 2
#define OUR_TIME2RETAIN 0 /* ERL 0: no connection recovery, nothing to retain */

/* RFC 7143 6.2: true if key was already negotiated in this login, else records it. */
static bool key_seen_before(struct login_state *l, const char *key)
{
	for (unsigned i = 0; i < l->nseen; i++)
		if (!strcmp(l->seen_keys[i], key))
			return true;
	if (l->nseen < sizeof(l->seen_keys) / sizeof(l->seen_keys[0]))
		snprintf(l->seen_keys[l->nseen++], ISCSI_KEY_MAX + 1, "%s", key);
	return false;
}

/* Negotiates a digest or boolean key into *out (NULL: bad value); false if key is not one. */
static bool negotiate_flag_key(struct iscsi_params *p, const char *key, const char *value,
			       const char **out)
{
	bool b;

	if (!strcmp(key, "HeaderDigest")) {
		*out = pick_digest(value, &p->header_digest);
	} else if (!strcmp(key, "DataDigest")) {
		*out = pick_digest(value, &p->data_digest);
	} else if (!strcmp(key, "InitialR2T")) {
		/* OR; we would accept No */
		if (!parse_bool(value, &b)) {
			p->initial_r2t = b;
			*out = b ? "Yes" : "No";
		}
	} else if (!strcmp(key, "ImmediateData")) {
		/* AND; we would accept Yes */
		if (!parse_bool(value, &b)) {
			p->immediate_data = b;
			*out = b ? "Yes" : "No";
		}
	} else if (!strcmp(key, "DataPDUInOrder") || !strcmp(key, "DataSequenceInOrder")) {
		/* OR with our Yes: always Yes */
		if (!parse_bool(value, &b))
			*out = "Yes";
	} else if (!strcmp(key, "IFMarker") || !strcmp(key, "OFMarker")) {
		/* RFC 7143 removed markers; RFC 3720 AND with our No */
		if (!parse_bool(value, &b))
			*out = "No";
	} else {
		return false;
	}
	return true;
}

/* Negotiates a numerical key into *out (NULL: bad value, ans: room); false if key is not one. */
static bool negotiate_number_key(struct iscsi_params *p, const char *key, const char *value,
				 char *ans, size_t ans_len, const char **out)
{
	uint32_t n;

	if (!strcmp(key, "MaxConnections")) {
		if (!parse_num(value, 1, 65535, &n))
			*out = "1"; /* min(offer, 1) */
	} else if (!strcmp(key, "MaxBurstLength")) {
		if (!parse_num(value, 512, 16777215, &n)) {
			p->max_burst = n < OUR_MAX_BURST ? n : OUR_MAX_BURST;
			snprintf(ans, ans_len, "%u", p->max_burst);
			*out = ans;
		}
	} else if (!strcmp(key, "FirstBurstLength")) {
		if (!parse_num(value, 512, 16777215, &n)) {
			p->first_burst = n < OUR_FIRST_BURST ? n : OUR_FIRST_BURST;
			snprintf(ans, ans_len, "%u", p->first_burst);
			*out = ans;
		}
	} else if (!strcmp(key, "DefaultTime2Wait")) {
		if (!parse_num(value, 0, 3600, &n)) {
			p->time2wait = n > OUR_TIME2WAIT ? n : OUR_TIME2WAIT; /* max */
			snprintf(ans, ans_len, "%u", p->time2wait);
			*out = ans;
		}
	} else if (!strcmp(key, "DefaultTime2Retain")) {
		if (!parse_num(value, 0, 3600, &n)) {
			p->time2retain = OUR_TIME2RETAIN; /* min(offer, 0) */
			snprintf(ans, ans_len, "%u", p->time2retain);
			*out = ans;
		}
	} else if (!strcmp(key, "MaxOutstandingR2T")) {
		if (!parse_num(value, 1, 65535, &n)) {
			p->max_outstanding_r2t = n < ISCSI_MAX_R2T ? n : ISCSI_MAX_R2T;
			snprintf(ans, ans_len, "%u", p->max_outstanding_r2t);
			*out = ans;
		}
	} else if (!strcmp(key, "ErrorRecoveryLevel")) {
		if (!parse_num(value, 0, 2, &n))
			*out = "0"; /* min(offer, 0) */
	} else if (!strcmp(key, "iSCSIProtocolLevel")) {
		/* RFC 7144 13.1: min; RFC 7143 is level 1 */
		if (!parse_num(value, 0, 31, &n))
			*out = n < 1 ? "0" : "1";
	} else {
		return false;
	}
	return true;
}

/* The answer to a key whose answer does not depend on its value. */
static const char *fixed_answer(const char *key)
{
	if (!strcmp(key, "IFMarkInt") || !strcmp(key, "OFMarkInt"))
		return "Irrelevant"; /* markers are off */
	if (!strcmp(key, "TaskReporting"))
		return "RFC3720"; /* RFC 7144 13.2: the value every target supports */
	if (!strcmp(key, "TargetAlias") || !strcmp(key, "TargetAddress") ||
	    !strcmp(key, "TargetPortalGroupTag"))
		return "Reject"; /* target-only keys (RFC 7143 13.6, 13.8, 13.9) */
	/* Unknown and X- / X# extension keys (RFC 7143 6.2, 13.5.4). */
	return "NotUnderstood";
}

/*
 * Negotiates one operational key the initiator sent; appends our answer to
 * resp (nothing for declarative keys). Returns 0 or a login status code.
 */
int negotiate_key(struct login_state *l, bool discovery, const char *key, const char *value,
		  struct kvlist *resp)
{
	struct iscsi_params *p = &l->p;
	char ans[32];
	uint32_t n;

	/* Answers to our own declarations need no reply. */
	if (!strcmp(value, "NotUnderstood") || !strcmp(value, "Irrelevant") ||
	    !strcmp(value, "Reject"))
		return 0;
	/* RFC 7143 6.2: a key negotiated twice in one login is a protocol error. */
	if (key_seen_before(l, key))
		return ISCSI_LOGIN_INITIATOR_ERROR;

	if (discovery && irrelevant_in_discovery(key))
		return kv_add(resp, key, "Irrelevant") ? ISCSI_LOGIN_OUT_OF_RESOURCES : 0;

	const char *out = NULL;
	if (!strcmp(key, "MaxRecvDataSegmentLength")) {
		/* declarative: the initiator's receive limit */
		if (!parse_num(value, 512, 16777215, &n)) {
			p->max_recv_dsl = n;
			return 0;
		}
	} else if (!strcmp(key, "InitiatorAlias")) {
		return 0; /* declarative, informational */
	} else if (!negotiate_flag_key(p, key, value, &out) &&
		   !negotiate_number_key(p, key, value, ans, sizeof(ans), &out)) {
		out = fixed_answer(key);
	}
	if (!out)
		out = "Reject"; /* a value outside the key's range or syntax (6.2.1) */
	return kv_add(resp, key, out) ? ISCSI_LOGIN_OUT_OF_RESOURCES : 0;
}
