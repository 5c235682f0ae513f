/*
 * baseline.c: the per-series window rules, quarantine and freeze state machine
 * of the baseliner. See baseline.h; the statistics are pw_stats's.
 */
#include "baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_stats.h"

#define US_PER_DAY (86400.0 * 1e6)

/* σ below this fraction of the platform norm is taken as the norm's fraction:
 * a series whose window happens to be near-constant must not turn every later
 * wiggle into a "10σ outlier". */
#define SIGMA_FLOOR_FRACTION 0.25

void pw_baseline_params_default(pw_baseline_params *p, bool gpu_class)
{
	p->min_runs = 30;
	p->min_days = 5.0;
	p->min_chipsets = 3;
	p->max_window = 120;
	p->platform_sigma = gpu_class ? 0.02 : 0.004;
	p->quarantine_factor = 2.0;
	p->outlier_k = 5.0;
	p->band_k = PW_NOISE_BAND_K;
	p->rebaseline_min_days = -1.0; /* as min_days */
}

pw_status pw_baseline_series_init(pw_baseline_series *s, const pw_baseline_params *p)
{
	memset(s, 0, sizeof *s);
	if (!p || p->max_window < 1 || p->min_runs > p->max_window || p->min_runs < 1)
		return PW_ERR_INVALID;
	s->params = *p;
	s->state = PW_BASELINE_BASELINING;
	s->ring = calloc(p->max_window, sizeof *s->ring);
	s->sorted = calloc(p->max_window, sizeof *s->sorted);
	if (!s->ring || !s->sorted) {
		pw_baseline_series_release(s);
		return PW_ERR_NOMEM;
	}
	return PW_OK;
}

void pw_baseline_series_release(pw_baseline_series *s)
{
	if (!s)
		return;
	free(s->ring);
	free(s->sorted);
	s->ring = NULL;
	s->sorted = NULL;
	s->ring_len = s->ring_head = 0;
}

void pw_baseline_series_clear_window(pw_baseline_series *s)
{
	s->ring_len = 0;
	s->ring_head = 0;
	s->excursion = 0;
}

size_t pw_baseline_series_window_len(const pw_baseline_series *s)
{
	return s->ring_len;
}

static const pw_baseline_point *ring_at(const pw_baseline_series *s, size_t i)
{
	/* i = 0 is the oldest point */
	size_t cap = s->params.max_window;
	size_t start = (s->ring_head + cap - s->ring_len) % cap;
	return &s->ring[(start + i) % cap];
}

/* The first index of sorted[0..n) whose value is >= v. */
static size_t lower_bound(const double *sorted, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Appends pt, evicting the oldest point of a full window; the sorted values
 * follow by one removal and one insertion (memmove of at most a window), so
 * that a baseline is read off them without sorting or selecting.
 */
static void ring_push(pw_baseline_series *s, const pw_baseline_point *pt)
{
	size_t n = s->ring_len;
	if (n == s->params.max_window) {
		/* ring_head is the oldest point when the ring is full */
		size_t at = lower_bound(s->sorted, n, s->ring[s->ring_head].value);
		memmove(&s->sorted[at], &s->sorted[at + 1], (n - at - 1) * sizeof *s->sorted);
		n--;
	}
	size_t at = lower_bound(s->sorted, n, pt->value);
	memmove(&s->sorted[at + 1], &s->sorted[at], (n - at) * sizeof *s->sorted);
	s->sorted[at] = pt->value;
	s->ring[s->ring_head] = *pt;
	s->ring_head = (s->ring_head + 1) % s->params.max_window;
	if (s->ring_len < s->params.max_window)
		s->ring_len++;
}

/* Distinct chip-sets in the window, with an open-addressing set twice the
 * window's size (a quadratic scan was a third of the baseliner's time). */
static size_t window_chipsets(const pw_baseline_series *s)
{
	enum { SLOTS = 1024 };
	uint64_t set_small[SLOTS];
	bool used_small[SLOTS];
	size_t slots = SLOTS;
	while (slots < 2 * s->ring_len)
		slots *= 2;
	uint64_t *set = set_small;
	bool *used = used_small;
	if (slots > SLOTS) {
		set = malloc(slots * sizeof *set);
		used = calloc(slots, sizeof *used);
		if (!set || !used) { /* out of memory: the quadratic count, allocation-free */
			free(set);
			free(used);
			size_t distinct = 0;
			for (size_t i = 0; i < s->ring_len; i++) {
				bool seen = false;
				for (size_t j = 0; j < i && !seen; j++)
					seen = s->ring[j].chipset == s->ring[i].chipset;
				distinct += !seen;
			}
			return distinct;
		}
	} else {
		memset(used, 0, slots * sizeof *used);
	}
	size_t distinct = 0;
	for (size_t i = 0; i < s->ring_len; i++) {
		uint64_t c = s->ring[i].chipset; /* order does not matter: the ring's slots as they are */
		size_t h = (size_t)((c * 0x9e3779b97f4a7c15ULL) >> 32) & (slots - 1);
		while (used[h] && set[h] != c)
			h = (h + 1) & (slots - 1);
		if (!used[h]) {
			used[h] = true;
			set[h] = c;
			distinct++;
		}
	}
	if (set != set_small) {
		free(set);
		free(used);
	}
	return distinct;
}

static double window_days(const pw_baseline_series *s)
{
	if (s->ring_len < 2)
		return 0.0;
	int64_t lo = ring_at(s, 0)->ts_us, hi = lo;
	for (size_t i = 1; i < s->ring_len; i++) {
		int64_t t = ring_at(s, i)->ts_us;
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	return (double)(hi - lo) / US_PER_DAY;
}

/* The days the window must span: the re-baseline of a frozen series has its own rule. */
static double need_min_days(const pw_baseline_series *s)
{
	if (s->state == PW_BASELINE_FROZEN && s->params.rebaseline_min_days >= 0.0)
		return s->params.rebaseline_min_days;
	return s->params.min_days;
}

static bool window_complete(const pw_baseline_series *s, size_t *nchip)
{
	*nchip = window_chipsets(s);
	return s->ring_len >= s->params.min_runs && window_days(s) >= need_min_days(s) &&
	       *nchip >= s->params.min_chipsets;
}

void pw_baseline_series_describe_need(const pw_baseline_series *s, char *buf, size_t len)
{
	size_t nchip = window_chipsets(s);
	double days = window_days(s);
	size_t need_runs = s->ring_len >= s->params.min_runs ? 0 : s->params.min_runs - s->ring_len;
	size_t need_chip = nchip >= s->params.min_chipsets ? 0 : s->params.min_chipsets - nchip;
	double min_days = need_min_days(s);
	double need_days = days >= min_days ? 0.0 : min_days - days;
	if (need_runs == 0 && need_chip == 0 && need_days <= 0.0)
		snprintf(buf, len, "window complete: %zu runs over %.1f days on %zu chip-sets",
		         s->ring_len, days, nchip);
	else
		snprintf(buf, len,
		         "window has %zu runs over %.1f days on %zu chip-sets; needs %zu more runs, "
		         "%.1f more days, %zu more chip-sets",
		         s->ring_len, days, nchip, need_runs, need_days, need_chip);
}

/* Median, MAD_n and the band over the whole window into out. */
static pw_status compute_baseline(pw_baseline_series *s, size_t nchip, pw_baseline_value *out)
{
	int64_t lo = 0, hi = 0;
	for (size_t i = 0; i < s->ring_len; i++) {
		const pw_baseline_point *p = &s->ring[i]; /* the valid slots, in any order */
		if (i == 0 || p->ts_us < lo)
			lo = p->ts_us;
		if (i == 0 || p->ts_us > hi)
			hi = p->ts_us;
	}
	double med, mad;
	pw_status st = pw_stats_median_mad_sorted(s->sorted, s->ring_len, &med, &mad);
	if (st != PW_OK)
		return st;
	out->version = s->current.version + 1;
	out->median = med;
	out->mad_n = mad;
	out->band_lo = med - s->params.band_k * mad;
	out->band_hi = med + s->params.band_k * mad;
	out->sigma_rel = med != 0.0 ? mad / fabs(med) : INFINITY;
	out->n = s->ring_len;
	out->n_chipsets = nchip;
	out->window_start_us = lo;
	out->window_end_us = hi;
	return PW_OK;
}

/* The σ the outlier rule measures against, floored (see SIGMA_FLOOR_FRACTION). */
static double outlier_sigma(const pw_baseline_series *s)
{
	double floor = SIGMA_FLOOR_FRACTION * s->params.platform_sigma * fabs(s->current.median);
	return s->current.mad_n > floor ? s->current.mad_n : floor;
}

/*
 * Whether an outlier measured at ts_us (on the excursion's side) belongs to
 * the current excursion: no in-band point of the window was measured between
 * them. Window points beyond outlier_k·σ of the current baseline (points that
 * joined the window before that baseline existed) do not count as in-band.
 * Before the window's oldest point nothing can be told, so it does not.
 */
static bool excursion_continues(const pw_baseline_series *s, int64_t ts_us)
{
	if (ts_us >= s->excursion_first_us && ts_us <= s->excursion_last_us)
		return true;
	bool before = ts_us < s->excursion_first_us;
	int64_t lo = before ? ts_us : s->excursion_last_us;
	int64_t hi = before ? s->excursion_first_us : ts_us;
	double sigma = outlier_sigma(s);
	int64_t oldest = INT64_MAX;
	for (size_t i = 0; i < s->ring_len; i++) {
		const pw_baseline_point *p = ring_at(s, i);
		int64_t t = p->ts_us;
		bool in_band = sigma <= 0.0 ||
		               fabs(p->value - s->current.median) <= s->params.outlier_k * sigma;
		if (in_band && t > lo && t < hi)
			return false;
		oldest = t < oldest ? t : oldest;
	}
	/* before the window's oldest point, what lay between may have left it */
	return !before || ts_us >= oldest;
}

static pw_status decide(pw_baseline_series *s, pw_baseline_event *ev, size_t *nev);

pw_status pw_baseline_series_add(pw_baseline_series *s, const pw_baseline_point *pt,
                                 pw_baseline_event *ev, size_t *nev)
{
	*nev = 0;
	if (!isfinite(pt->value))
		return PW_ERR_INVALID;

	if (s->has_baseline) {
		double sigma = outlier_sigma(s);
		double z = sigma > 0.0 ? (pt->value - s->current.median) / sigma : 0.0;
		if (fabs(z) > s->params.outlier_k) {
			int side = z > 0.0 ? 1 : -1;
			bool cont = side == s->excursion && excursion_continues(s, pt->ts_us);
			ev[(*nev)++] = (pw_baseline_event){
				cont ? PW_BASELINE_EV_EXCURSION : PW_BASELINE_EV_OUTLIER, z};
			if (cont) {
				if (pt->ts_us < s->excursion_first_us)
					s->excursion_first_us = pt->ts_us;
				if (pt->ts_us > s->excursion_last_us)
					s->excursion_last_us = pt->ts_us;
			} else if (s->excursion == 0 || pt->ts_us > s->excursion_last_us) {
				/* the newest excursion is the one that later outliers may continue */
				s->excursion = side;
				s->excursion_first_us = s->excursion_last_us = pt->ts_us;
			}
			return PW_OK;
		}
	}
	ring_push(s, pt);
	return decide(s, ev, nev);
}

pw_status pw_baseline_series_settle(pw_baseline_series *s, pw_baseline_event *ev, size_t *nev)
{
	*nev = 0;
	if (s->state != PW_BASELINE_FROZEN)
		return PW_OK;
	return decide(s, ev, nev);
}

/* After the window changed: a new version when it is complete (see add). */
static pw_status decide(pw_baseline_series *s, pw_baseline_event *ev, size_t *nev)
{
	size_t nchip;
	if (!window_complete(s, &nchip))
		return PW_OK;

	pw_baseline_value v;
	pw_status st = compute_baseline(s, nchip, &v);
	if (st != PW_OK)
		return st;

	bool noisy = v.sigma_rel > s->params.quarantine_factor * s->params.platform_sigma;
	pw_baseline_state was = s->state;
	if (noisy && was == PW_BASELINE_QUARANTINED)
		return PW_OK; /* still noisy: the quarantined version stands, nothing new to store */
	s->current = v;
	s->has_baseline = true;
	if (noisy) {
		s->state = PW_BASELINE_QUARANTINED;
		if (was == PW_BASELINE_FROZEN) {
			/* the re-baseline completed, noisy: the freeze ends in quarantine */
			ev[(*nev)++] = (pw_baseline_event){PW_BASELINE_EV_UNFROZEN, 0.0};
			s->freeze_reason[0] = '\0';
			s->freeze_event[0] = '\0';
		}
		if (was != PW_BASELINE_QUARANTINED)
			ev[(*nev)++] = (pw_baseline_event){PW_BASELINE_EV_QUARANTINED, 0.0};
		return PW_OK;
	}
	s->state = PW_BASELINE_ACTIVE;
	if (was == PW_BASELINE_FROZEN) {
		ev[(*nev)++] = (pw_baseline_event){PW_BASELINE_EV_UNFROZEN, 0.0};
		s->freeze_reason[0] = '\0';
		s->freeze_event[0] = '\0';
	}
	ev[(*nev)++] = (pw_baseline_event){PW_BASELINE_EV_UPDATED, 0.0};
	return PW_OK;
}

bool pw_baseline_series_freeze(pw_baseline_series *s, const char *event_id, const char *reason)
{
	if (s->state == PW_BASELINE_FROZEN && strcmp(s->freeze_event, event_id) == 0)
		return false;
	s->state = PW_BASELINE_FROZEN;
	s->has_baseline = false;
	pw_baseline_series_clear_window(s);
	snprintf(s->freeze_event, sizeof s->freeze_event, "%s", event_id);
	snprintf(s->freeze_reason, sizeof s->freeze_reason, "%s", reason);
	return true;
}

void pw_baseline_series_push_quiet(pw_baseline_series *s, const pw_baseline_point *pt)
{
	ring_push(s, pt);
}

void pw_baseline_series_resume_excursion(pw_baseline_series *s, double value, int64_t ts_us)
{
	if (!s->has_baseline || !isfinite(value) || value == s->current.median)
		return;
	s->excursion = value > s->current.median ? 1 : -1;
	s->excursion_first_us = s->excursion_last_us = ts_us;
}
