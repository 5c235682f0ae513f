/*
 * gate_numerics.c: the "faster but wrong" check (gate_numerics.h).
 */
#include "gate_numerics.h"

#include <stdbool.h>
#include <string.h>

const char *pw_gate_numerics_name(pw_gate_numerics n)
{
	switch (n) {
	case PW_GATE_NUMERICS_NOT_CHECKED: return "not_checked";
	case PW_GATE_NUMERICS_MATCH: return "match";
	case PW_GATE_NUMERICS_MISMATCH: return "mismatch";
	}
	return "not_checked";
}

static const char *fp_at(const char *const *v, size_t i)
{
	return v && v[i] && v[i][0] ? v[i] : NULL;
}

/* runs of base[] carrying fingerprint fp */
static size_t count_of(const char *const *base, size_t n_base, const char *fp)
{
	size_t n = 0;
	for (size_t i = 0; i < n_base; i++) {
		const char *b = fp_at(base, i);
		n += b && strcmp(b, fp) == 0;
	}
	return n;
}

pw_gate_numerics_result pw_gate_numerics_check(const char *const *base, size_t n_base,
                                               const char *const *cand, size_t n_cand)
{
	pw_gate_numerics_result r = {PW_GATE_NUMERICS_NOT_CHECKED, NULL, NULL};
	/* the baseline's numerics: the fingerprint most of its runs carry; a tie
	 * between two leaves none (which one the baseline computes is not known) */
	size_t best = 0;
	bool tie = false;
	for (size_t i = 0; i < n_base; i++) {
		const char *b = fp_at(base, i);
		if (!b || (r.baseline && strcmp(b, r.baseline) == 0))
			continue;
		size_t n = count_of(base, n_base, b);
		if (n > best) {
			best = n;
			r.baseline = b;
			tie = false;
		} else if (n == best) {
			tie = true;
		}
	}
	if (tie)
		r.baseline = NULL;
	bool all_carry = n_cand > 0;
	for (size_t i = 0; i < n_cand; i++) {
		const char *c = fp_at(cand, i);
		if (!c) {
			all_carry = false;
			continue;
		}
		if (!r.candidate)
			r.candidate = c;
		if (r.baseline && strcmp(c, r.baseline) != 0) {
			r.state = PW_GATE_NUMERICS_MISMATCH;
			r.candidate = c;
			return r;
		}
	}
	if (r.baseline && all_carry)
		r.state = PW_GATE_NUMERICS_MATCH;
	return r;
}
