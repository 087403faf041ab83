# stats.awk - the statistics of the verdicts, as awk functions that
# lib.sh puts before its programs: Student's t distribution, the paired
# difference of two encodings over seeds, and Holm's correction.
# tests/sh/experiments.sh checks them against known answers.

# lgam(x): log Gamma(x), x > 0 (Lanczos, g = 7: about 15 digits).
function lgam(x,  a, i, t) {
	split("676.5203681218851 -1259.1392167224028 771.32342877765313 " \
	    "-176.61502916214059 12.507343278686905 -0.13857109526572012 " \
	    "9.9843695780195716e-6 1.5056327351493116e-7", LANCZOS, " ")
	x -= 1; a = 0.99999999999980993; t = x + 7.5
	for (i = 1; i <= 8; i++) a += LANCZOS[i] / (x + i)
	return 0.91893853320467274 + (x + 0.5) * log(t) - t + log(a)
}

# betacf(a, b, x): the continued fraction of the incomplete beta function
# (modified Lentz).
function betacf(a, b, x,  m, m2, aa, c, d, del, h, qab, qap, qam) {
	qab = a + b; qap = a + 1; qam = a - 1; c = 1; d = 1 - qab * x / qap
	if (d < 0 ? -d < 1e-300 : d < 1e-300) d = 1e-300
	d = 1 / d; h = d
	for (m = 1; m <= 300; m++) {
		m2 = 2 * m
		aa = m * (b - m) * x / ((qam + m2) * (a + m2))
		d = 1 + aa * d; if (d < 0 ? -d < 1e-300 : d < 1e-300) d = 1e-300
		c = 1 + aa / c; if (c < 0 ? -c < 1e-300 : c < 1e-300) c = 1e-300
		d = 1 / d; h *= d * c
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
		d = 1 + aa * d; if (d < 0 ? -d < 1e-300 : d < 1e-300) d = 1e-300
		c = 1 + aa / c; if (c < 0 ? -c < 1e-300 : c < 1e-300) c = 1e-300
		d = 1 / d; del = d * c; h *= del
		if ((del - 1 < 0 ? 1 - del : del - 1) < 1e-15) break
	}
	return h
}

# betai(a, b, x): the regularized incomplete beta function I_x(a, b).
function betai(a, b, x,  bt) {
	if (x <= 0) return 0
	if (x >= 1) return 1
	bt = exp(lgam(a + b) - lgam(a) - lgam(b) + a * log(x) + b * log(1 - x))
	if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a
	return 1 - bt * betacf(b, a, 1 - x) / b
}

# tp2(t, df): the two-sided p-value of t under Student's t with df degrees
# of freedom, P(|T| >= |t|).
function tp2(t, df) {
	return betai(df / 2, 0.5, df / (df + t * t))
}

# tq(p, df): the p-quantile of Student's t, 0.5 <= p < 1 (bisection on
# tp2, to 1e-12).
function tq(p, df,  lo, hi, mid, i) {
	lo = 0; hi = 1e7
	for (i = 0; i < 200 && hi - lo > 1e-12; i++) {
		mid = (lo + hi) / 2
		if (1 - tp2(mid, df) / 2 < p) lo = mid; else hi = mid
	}
	return (lo + hi) / 2
}

# paired(A, B, R): the difference B - A over the keys (seeds) that both
# arrays have, into R: R["n"] pairs, R["mean"], R["sd"], the 95% interval
# R["lo"] .. R["hi"], the 90% one R["lo90"] .. R["hi90"] (the equivalence
# test's), and R["p"], the paired t test's two-sided p-value (1 where
# there is no difference at all, 0 where every pair differs by the same
# amount).  Fewer than 2 pairs: R["n"] alone.
function paired(A, B, R,  k, n, s, ss, d, m, v, se) {
	split("", R); n = s = ss = 0
	for (k in A) if (k in B) { d = B[k] - A[k]; n++; s += d; ss += d * d }
	R["n"] = n
	if (n < 2) return
	m = s / n; v = (ss - n * m * m) / (n - 1); if (v < 0) v = 0
	se = sqrt(v / n)
	R["mean"] = m; R["sd"] = sqrt(v)
	R["lo"] = m - tq(0.975, n - 1) * se; R["hi"] = m + tq(0.975, n - 1) * se
	R["lo90"] = m - tq(0.95, n - 1) * se; R["hi90"] = m + tq(0.95, n - 1) * se
	R["p"] = se > 0 ? tp2(m / se, n - 1) : (m == 0 ? 1 : 0)
}

# holm(P, ADJ, n): Holm's step-down adjustment of the p-values P[1..n]
# into ADJ[1..n] (the family-wise error stays within the level).
function holm(P, ADJ, n,  i, j, o, t, run, a) {
	for (i = 1; i <= n; i++) o[i] = i
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && P[o[j - 1]] > P[o[j]]; j--) { t = o[j]; o[j] = o[j - 1]; o[j - 1] = t }
	run = 0
	for (i = 1; i <= n; i++) {
		a = (n - i + 1) * P[o[i]]; if (a > 1) a = 1
		if (a > run) run = a
		ADJ[o[i]] = run
	}
}

# spearman(X, Y, n): Spearman's rank correlation of X[1..n] and Y[1..n],
# ties sharing their mean rank; "" when either has no spread.
function spearman(X, Y, n,  i, j, c, k, rx, ry, mx, my, sxy, sxx, syy) {
	for (i = 1; i <= n; i++) {
		c = 0; k = 0
		for (j = 1; j <= n; j++) { c += X[j] < X[i]; k += X[j] == X[i] }
		rx[i] = c + (k + 1) / 2
		c = 0; k = 0
		for (j = 1; j <= n; j++) { c += Y[j] < Y[i]; k += Y[j] == Y[i] }
		ry[i] = c + (k + 1) / 2
		mx += rx[i] / n; my += ry[i] / n
	}
	for (i = 1; i <= n; i++) {
		sxy += (rx[i] - mx) * (ry[i] - my); sxx += (rx[i] - mx) ^ 2; syy += (ry[i] - my) ^ 2
	}
	return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : ""
}

# seeds(d, sd, m, margin): about how many paired seeds would decide a step
# whose difference has mean d and per-seed sd, were they its true values
# (so a guide, not a promise): the fewest N with power 0.8 either to
# reject equality at the Bonferroni level 0.05 / m (Holm's strictest over
# m steps, so an upper bound), t(1 - 0.025 / m) + t(0.8) <= |d| sqrt(N) /
# sd, or, where |d| < margin, to show equivalence (TOST at 0.05),
# t(0.95) + t(q) <= (margin - |d|) sqrt(N) / sd, q 0.9 at d = 0 and 0.8
# otherwise; t with N - 1 degrees of freedom.  "" past 1000 seeds.
function seeds(d, sd, m, margin,  lo, hi, mid) {
	if (d < 0) d = -d
	if (sd <= 0) return 2
	lo = 1; hi = 2
	while (!seeds_enough(hi, d, sd, m, margin)) {
		lo = hi; hi *= 2
		if (hi > 1024) return ""
	}
	while (hi - lo > 1) {	# lo too few, hi enough
		mid = int((lo + hi) / 2)
		if (seeds_enough(mid, d, sd, m, margin)) hi = mid; else lo = mid
	}
	return hi > 1000 ? "" : hi
}
# futile(n, d, hi, m, margin, cap): whether a step of n seeds, mean
# difference d and 95% interval up to hi would, by seeds()'s guess, need
# more than twice cap seeds (or over 1000) to be decided: sequential
# seeding stops there.  Never before 3 seeds, whose sd is too loose.
function futile(n, d, hi, m, margin, cap,  need) {
	if (n < 3) return 0
	need = seeds(d, (hi - d) / tq(0.975, n - 1) * sqrt(n), m, margin)
	return need == "" || need > 2 * cap
}
function seeds_enough(N, d, sd, m, margin) {
	if (d > 0 && tq(1 - 0.025 / m, N - 1) + tq(0.8, N - 1) <= d * sqrt(N) / sd)
		return 1
	return d < margin && tq(0.95, N - 1) + tq(d == 0 ? 0.9 : 0.8, N - 1) <= (margin - d) * sqrt(N) / sd
}
