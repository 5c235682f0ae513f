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

static bool in_baseline(const char *const *base, size_t n_base, const char *fp)
{
	for (size_t i = 0; i < n_base; i++) {
		const char *b = fp_at(base, i);
		if (b && strcmp(b, fp) == 0)
			return true;
	}
	return false;
}

pw_gate_numerics_result pw_gate_numerics_check(const char *const *base, size_t n_base,
                                               const char *const *cand, size_t n_cand)
{
	pw_gate_numerics_result r = {PW_GATE_NUMERICS_NOT_CHECKED, NULL, NULL};
	for (size_t i = 0; i < n_base && !r.baseline; i++)
		r.baseline = fp_at(base, i);
	bool all_carry = n_cand > 0;
	for (size_t i = 0; i < n_cand; i++) {
		const char *c = fp_at(cand, i);
		if (!c) {
			all_carry = false;
			continue;
		}
		if (!r.candidate)
			r.candidate = c;
		if (r.baseline && !in_baseline(base, n_base, c)) {
			r.state = PW_GATE_NUMERICS_MISMATCH;
			r.candidate = c;
			return r;
		}
	}
	if (r.baseline && all_carry)
		r.state = PW_GATE_NUMERICS_MATCH;
	return r;
}
