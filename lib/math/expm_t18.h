/*
 * expm_t18.h - what the exponentials of expm_impl.h (one block at a time)
 * and expm_lanes.c (16 blocks at once) share: the degree-18 Taylor
 * polynomial's coefficients and float's scaled norm bound.
 */
#ifndef EXPM_T18_H
#define EXPM_T18_H

/* The T18 coefficients: B_i = sum_j c[i][j] {I, Z, Z^2, Z^3, Z^6}[j],
 * A9 = B0 B4 + B3, T18(Z) = B1 + (B2 + A9) A9 (Bader, Blanes, Casas 2019,
 * double precision table); an initializer for a table of either type. */
#define EXPM_T18 {							\
	{ 0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,	\
	  -8.92138498045729985177e-04, 0. },				\
	{ 0., 3.97849749499645077844e-01, 1.36783778460411720168e+00,	\
	  4.98289622525382669416e-01, -6.37898194594723280150e-04 },	\
	{ -1.09676396052962061844e+01, 1.68015813878906206114e+00,	\
	  5.71779846478865511061e-02, -6.98210122488052056106e-03,	\
	  3.34975017086070470649e-05 },					\
	{ -9.04316832390810593223e-02, -6.76404519071381882256e-02,	\
	  6.75961301770459654925e-02, 2.95552570429315521194e-02,	\
	  -1.39180257516060693404e-05 },				\
	{ 0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, \
	  -1.40086798182036094347e-05 },				\
}

/* T18's error at a scaled 2-norm of 3.3 is 6e-8, a float ulp. */
#define EXPM_THETA_F32	3.3

#endif
