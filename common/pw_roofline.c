/*
 * pw_roofline.c: the cost model (pw_roofline.h). The config parser and the
 * intensity / ridge arithmetic came here from the attributor, which now
 * calls them; the per-op time and the sanity bound are the planner's.
 */
#include "pw_roofline.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pw_status pw_roofline_config_parse(const char *name, pw_roofline_config *out)
{
	if (!name || !out)
		return PW_ERR_INVALID;
	*out = (pw_roofline_config){.batch = 1};
	char buf[128];
	if (snprintf(buf, sizeof buf, "%s", name) >= (int)sizeof buf)
		return PW_ERR_INVALID;
	char *save = NULL, *tok = strtok_r(buf, ".", &save);
	if (!tok)
		return PW_ERR_INVALID;
	if (strcmp(tok, "decode") == 0)
		out->decode = true;
	else if (strcmp(tok, "prefill") != 0)
		return PW_ERR_INVALID;
	bool have_s = false, have_dtype = false;
	while ((tok = strtok_r(NULL, ".", &save)) != NULL) {
		char *end;
		if (tok[0] == 'B' && isdigit((unsigned char)tok[1])) {
			unsigned long v = strtoul(tok + 1, &end, 10);
			if (*end || v == 0 || v > 1u << 20)
				return PW_ERR_INVALID;
			out->batch = (uint32_t)v;
		} else if (tok[0] == 's' && isdigit((unsigned char)tok[1])) {
			unsigned long v = strtoul(tok + 1, &end, 10);
			if (*end || v == 0 || v > 1u << 24)
				return PW_ERR_INVALID;
			out->seq_len = (uint32_t)v;
			have_s = true;
		} else if (strcmp(tok, "int8") == 0 || strcmp(tok, "fp8") == 0) {
			out->int8 = true;
			have_dtype = true;
		} else if (strcmp(tok, "bf16") == 0) {
			have_dtype = true;
		} else {
			return PW_ERR_INVALID;
		}
	}
	return have_s && have_dtype ? PW_OK : PW_ERR_INVALID;
}

double pw_roofline_peak_flops(const pw_roofline_platform *p, const pw_roofline_config *c)
{
	return (c->int8 ? p->peak_tflops_int8_chip : p->peak_tflops_bf16_chip) * 1e12;
}

double pw_roofline_bw_tb_s(const pw_roofline_platform *p)
{
	return p ? p->chips * p->peak_hbm_gb_s_chip * p->achieved_fraction / 1e3 : NAN;
}

double pw_roofline_bytes_us(double bytes, double bw_tb_s)
{
	if (!isfinite(bytes) || !isfinite(bw_tb_s) || bw_tb_s <= 0)
		return NAN;
	return bytes / (bw_tb_s * 1e12) * 1e6;
}

bool pw_roofline_intensity(const pw_roofline_platform *p, const pw_roofline_config *c, double mfu,
                           double hbm_util, double *ai, double *ridge)
{
	if (!p || !c || !isfinite(mfu) || !isfinite(hbm_util) || hbm_util <= 0 ||
	    p->peak_hbm_gb_s_chip <= 0)
		return false;
	double bw = p->peak_hbm_gb_s_chip * 1e9, fl = pw_roofline_peak_flops(p, c);
	*ai = mfu * fl / (hbm_util * bw);
	*ridge = fl / bw;
	return true;
}

double pw_roofline_op_us(const pw_roofline_platform *p, const pw_roofline_config *c, double bytes,
                         double flops)
{
	if (!p || !c || !(bytes >= 0) || !(flops >= 0) || p->chips == 0)
		return NAN;
	double mem = pw_roofline_bytes_us(bytes, pw_roofline_bw_tb_s(p));
	double peak = pw_roofline_peak_flops(p, c) * p->chips;
	if (!isfinite(mem) || !(peak > 0))
		return NAN;
	double comp = flops / peak * 1e6;
	return mem > comp ? mem : comp;
}

bool pw_roofline_suspect_harness(double measured_us, double predicted_us, bool hlo_changed,
                                 double floor)
{
	if (hlo_changed || !isfinite(measured_us) || !isfinite(predicted_us) || measured_us <= 0 ||
	    predicted_us <= 0 || !(floor > 0 && floor <= 1))
		return false;
	return measured_us < floor * predicted_us;
}
