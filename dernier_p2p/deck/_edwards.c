/* Public-data arithmetic in the prime-order subgroup of Ed25519, for the deck's verifiers.
 *
 * Written from the published formulas: the curve -x^2 + y^2 = 1 + d x^2 y^2 over GF(2^255 - 19)
 * and its point encoding (RFC 8032, 5.1), field elements in five 51-bit limbs with 128-bit
 * products, extended twisted Edwards coordinates (Hisil, Wong, Carter, Dawson 2008: the
 * "add-2008-hwcd-3" addition and "dbl-2008-hwcd" doubling for a = -1), Straus' interleaved
 * signed radix-16 windows and Pippenger's bucket method for multi-scalar multiplication.
 *
 * Nothing here is constant-time: it is only ever given public values (elements received from
 * other seats, proof responses, challenges and verifier weights). Secret scalars stay on
 * libsodium's constant-time code (dernier_p2p/deck/group.py).
 *
 * Module functions (bytes in, bytes out):
 *   decode(enc, by_order)  -> (index of the first invalid element or -1, xy); the subgroup
 *                             test by halving (ge_halvable3), or with by_order by l * P = O
 *   msm(scalars, xy, algo) -> enc || xy of sum k_i P_i
 *   comb_table(xy)         -> a point's fixed-base table: (j + 1) * 16^i * P, i < 64, j < 8
 *   comb_msm(scalars, (table, ...)) -> enc || xy of sum k_i P_i from fixed-base tables
 * where enc is n concatenated 32-byte encodings, xy n concatenated affine points (x || y, 32
 * canonical little-endian bytes each) and scalars n concatenated 32-byte little-endian integers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
typedef unsigned __int128 u128;

#define MASK51 ((u64)0x7ffffffffffffULL)

typedef struct { u64 v[5]; } fe;

static const uint8_t D_BYTES[32] = {
    0xa3, 0x78, 0x59, 0x13, 0xca, 0x4d, 0xeb, 0x75, 0xab, 0xd8, 0x41, 0x41, 0x4d, 0x0a, 0x70,
    0x00, 0x98, 0xe8, 0x79, 0x77, 0x79, 0x40, 0xc7, 0x8c, 0x73, 0xfe, 0x6f, 0x2b, 0xee, 0x6c,
    0x03, 0x52};
static const uint8_t D2_BYTES[32] = {
    0x59, 0xf1, 0xb2, 0x26, 0x94, 0x9b, 0xd6, 0xeb, 0x56, 0xb1, 0x83, 0x82, 0x9a, 0x14, 0xe0,
    0x00, 0x30, 0xd1, 0xf3, 0xee, 0xf2, 0x80, 0x8e, 0x19, 0xe7, 0xfc, 0xdf, 0x56, 0xdc, 0xd9,
    0x06, 0x24};
static const uint8_t SQRTM1_BYTES[32] = {
    0xb0, 0xa0, 0x0e, 0x4a, 0x27, 0x1b, 0xee, 0xc4, 0x78, 0xe4, 0x2f, 0xad, 0x06, 0x18, 0x43,
    0x2f, 0xa7, 0xd7, 0xfb, 0x3d, 0x99, 0x00, 0x4d, 0x2b, 0x0b, 0xdf, 0xc1, 0x4f, 0x80, 0x24,
    0x83, 0x2b};
/* the group order l = 2^252 + 27742317777372353535851937790883648493 */
static const uint8_t L_BYTES[32] = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x10};

/* The subgroup test by halving (ge_halvable3, below): the Montgomery form of the curve is
 * v^2 = u^3 + A u^2 + u with A = 486662; C0 = sqrt(-(A + 2)) (u = (1 + y)/(1 - y), v = C0 u/x);
 * on the 2-isogenous curve Y^2 = X (X - (A + 2)) (X - (A - 2)), S = (XS, YS) is a point of order 4
 * with 2S = (A + 2, 0) and LAMS the slope of its tangent. */
static const uint8_t MONT_A_BYTES[32] = {0x06, 0x6d, 0x07};
static const uint8_t E1_BYTES[32] = {0x08, 0x6d, 0x07}; /* A + 2 */
static const uint8_t C0_BYTES[32] = {
    0x06, 0x7e, 0x45, 0xff, 0xaa, 0x04, 0x6e, 0xcc, 0x82, 0x1a, 0x7d, 0x4b, 0xd1, 0xd3, 0xa1,
    0xc5, 0x7e, 0x4f, 0xfc, 0x03, 0xdc, 0x08, 0x7b, 0xd2, 0xbb, 0x06, 0xa0, 0x60, 0xf4, 0xed,
    0x26, 0x0f};
static const uint8_t XS_BYTES[32] = {
    0xb8, 0xe4, 0xf6, 0xc6, 0x20, 0x6e, 0xbb, 0x2c, 0x38, 0xd9, 0x6a, 0xaf, 0x71, 0xdc, 0x4b,
    0x39, 0x21, 0xb2, 0x16, 0x50, 0x0a, 0xb1, 0xc0, 0x7b, 0xa0, 0x7a, 0xac, 0x0c, 0xd0, 0x16,
    0x36, 0x28};
static const uint8_t YS_BYTES[32] = {
    0x7d, 0x36, 0x12, 0x72, 0xbe, 0x23, 0x89, 0xa6, 0x8f, 0x4d, 0x2a, 0xa1, 0x1c, 0x47, 0x68,
    0x8d, 0xbd, 0x9b, 0xd2, 0x5f, 0xeb, 0x9d, 0x7e, 0x08, 0xbf, 0x0a, 0xa7, 0xe6, 0x5f, 0xd2,
    0x93, 0x2f};
static const uint8_t LAMS_BYTES[32] = {
    0x13, 0x44, 0x88, 0x9c, 0xef, 0x48, 0xa2, 0xe9, 0x63, 0x93, 0x4a, 0x28, 0xc7, 0x11, 0x5a,
    0x63, 0xef, 0xa6, 0xf4, 0xd7, 0x7a, 0xa7, 0x1f, 0xc2, 0xaf, 0xc2, 0xa9, 0xf9, 0x97, 0xf4,
    0xe4, 0x6b};

static fe FE_D, FE_D2, FE_SQRTM1, FE_MONT_A, FE_E1, FE_C0, FE_XS, FE_YS, FE_LAMS;
static signed char L_DIGITS[64];

/* ---------------------------------------------------------------- field GF(2^255 - 19) */

static u64 load64(const uint8_t *s) {
    u64 r = 0;
    for (int i = 7; i >= 0; i--) r = (r << 8) | s[i];
    return r;
}

static void store64(uint8_t *s, u64 v) {
    for (int i = 0; i < 8; i++) { s[i] = (uint8_t)v; v >>= 8; }
}

/* the low 255 bits of s (bit 255 ignored) */
static void fe_frombytes(fe *h, const uint8_t *s) {
    u64 a0 = load64(s), a1 = load64(s + 8), a2 = load64(s + 16), a3 = load64(s + 24);
    h->v[0] = a0 & MASK51;
    h->v[1] = ((a0 >> 51) | (a1 << 13)) & MASK51;
    h->v[2] = ((a1 >> 38) | (a2 << 26)) & MASK51;
    h->v[3] = ((a2 >> 25) | (a3 << 39)) & MASK51;
    h->v[4] = (a3 >> 12) & MASK51;
}

static void fe_carry(fe *h) {
    u64 c;
    c = h->v[0] >> 51; h->v[0] &= MASK51; h->v[1] += c;
    c = h->v[1] >> 51; h->v[1] &= MASK51; h->v[2] += c;
    c = h->v[2] >> 51; h->v[2] &= MASK51; h->v[3] += c;
    c = h->v[3] >> 51; h->v[3] &= MASK51; h->v[4] += c;
    c = h->v[4] >> 51; h->v[4] &= MASK51; h->v[0] += 19 * c;
    c = h->v[0] >> 51; h->v[0] &= MASK51; h->v[1] += c;
}

/* the canonical 32 bytes (value reduced below p) */
static void fe_tobytes(uint8_t *s, const fe *f) {
    fe h = *f;
    fe_carry(&h);
    fe_carry(&h);
    /* now h < 2^255 + small; q = 1 iff h >= p */
    u64 q = (h.v[0] + 19) >> 51;
    q = (h.v[1] + q) >> 51;
    q = (h.v[2] + q) >> 51;
    q = (h.v[3] + q) >> 51;
    q = (h.v[4] + q) >> 51;
    h.v[0] += 19 * q;
    u64 c;
    c = h.v[0] >> 51; h.v[0] &= MASK51; h.v[1] += c;
    c = h.v[1] >> 51; h.v[1] &= MASK51; h.v[2] += c;
    c = h.v[2] >> 51; h.v[2] &= MASK51; h.v[3] += c;
    c = h.v[3] >> 51; h.v[3] &= MASK51; h.v[4] += c;
    h.v[4] &= MASK51;
    store64(s, h.v[0] | (h.v[1] << 51));
    store64(s + 8, (h.v[1] >> 13) | (h.v[2] << 38));
    store64(s + 16, (h.v[2] >> 26) | (h.v[3] << 25));
    store64(s + 24, (h.v[3] >> 39) | (h.v[4] << 12));
}

static void fe_0(fe *h) { memset(h, 0, sizeof *h); }
static void fe_1(fe *h) { memset(h, 0, sizeof *h); h->v[0] = 1; }

static void fe_add(fe *h, const fe *f, const fe *g) {
    for (int i = 0; i < 5; i++) h->v[i] = f->v[i] + g->v[i];
}

/* f - g, with g's limbs below 2^53 */
static void fe_sub(fe *h, const fe *f, const fe *g) {
    h->v[0] = f->v[0] + 0x1fffffffffffb4ULL - g->v[0];
    h->v[1] = f->v[1] + 0x1ffffffffffffcULL - g->v[1];
    h->v[2] = f->v[2] + 0x1ffffffffffffcULL - g->v[2];
    h->v[3] = f->v[3] + 0x1ffffffffffffcULL - g->v[3];
    h->v[4] = f->v[4] + 0x1ffffffffffffcULL - g->v[4];
    fe_carry(h);
}

static void fe_neg(fe *h, const fe *f) {
    fe z;
    fe_0(&z);
    fe_sub(h, &z, f);
}

static void fe_mul(fe *h, const fe *f, const fe *g) {
    u64 f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4];
    u64 g0 = g->v[0], g1 = g->v[1], g2 = g->v[2], g3 = g->v[3], g4 = g->v[4];
    u64 g1_19 = 19 * g1, g2_19 = 19 * g2, g3_19 = 19 * g3, g4_19 = 19 * g4;
    u128 r0 = (u128)f0 * g0 + (u128)f1 * g4_19 + (u128)f2 * g3_19 + (u128)f3 * g2_19
              + (u128)f4 * g1_19;
    u128 r1 = (u128)f0 * g1 + (u128)f1 * g0 + (u128)f2 * g4_19 + (u128)f3 * g3_19
              + (u128)f4 * g2_19;
    u128 r2 = (u128)f0 * g2 + (u128)f1 * g1 + (u128)f2 * g0 + (u128)f3 * g4_19
              + (u128)f4 * g3_19;
    u128 r3 = (u128)f0 * g3 + (u128)f1 * g2 + (u128)f2 * g1 + (u128)f3 * g0
              + (u128)f4 * g4_19;
    u128 r4 = (u128)f0 * g4 + (u128)f1 * g3 + (u128)f2 * g2 + (u128)f3 * g1 + (u128)f4 * g0;
    r1 += (u64)(r0 >> 51);
    u64 h0 = (u64)r0 & MASK51;
    r2 += (u64)(r1 >> 51);
    u64 h1 = (u64)r1 & MASK51;
    r3 += (u64)(r2 >> 51);
    u64 h2 = (u64)r2 & MASK51;
    r4 += (u64)(r3 >> 51);
    u64 h3 = (u64)r3 & MASK51;
    u64 c = (u64)(r4 >> 51);
    u64 h4 = (u64)r4 & MASK51;
    h0 += c * 19;
    h1 += h0 >> 51;
    h0 &= MASK51;
    h->v[0] = h0; h->v[1] = h1; h->v[2] = h2; h->v[3] = h3; h->v[4] = h4;
}

static void fe_sq(fe *h, const fe *f) {
    u64 f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4];
    u64 f0_2 = 2 * f0, f1_2 = 2 * f1;
    u64 f3_19 = 19 * f3, f4_19 = 19 * f4;
    u128 r0 = (u128)f0 * f0 + (u128)f1_2 * f4_19 + (u128)(2 * f2) * f3_19;
    u128 r1 = (u128)f0_2 * f1 + (u128)(2 * f2) * f4_19 + (u128)f3 * f3_19;
    u128 r2 = (u128)f0_2 * f2 + (u128)f1 * f1 + (u128)(2 * f3) * f4_19;
    u128 r3 = (u128)f0_2 * f3 + (u128)f1_2 * f2 + (u128)f4 * f4_19;
    u128 r4 = (u128)f0_2 * f4 + (u128)f1_2 * f3 + (u128)f2 * f2;
    r1 += (u64)(r0 >> 51);
    u64 h0 = (u64)r0 & MASK51;
    r2 += (u64)(r1 >> 51);
    u64 h1 = (u64)r1 & MASK51;
    r3 += (u64)(r2 >> 51);
    u64 h2 = (u64)r2 & MASK51;
    r4 += (u64)(r3 >> 51);
    u64 h3 = (u64)r3 & MASK51;
    u64 c = (u64)(r4 >> 51);
    u64 h4 = (u64)r4 & MASK51;
    h0 += c * 19;
    h1 += h0 >> 51;
    h0 &= MASK51;
    h->v[0] = h0; h->v[1] = h1; h->v[2] = h2; h->v[3] = h3; h->v[4] = h4;
}

static void fe_sqn(fe *h, const fe *f, int n) {
    fe_sq(h, f);
    for (int i = 1; i < n; i++) fe_sq(h, h);
}

/* z^(2^250 - 1) into t250, z^11 into z11 */
static void fe_pow250(fe *t250, fe *z11, const fe *z) {
    fe t0, t1, t2, t3;
    fe_sq(&t0, z);             /* 2 */
    fe_sqn(&t1, &t0, 2);       /* 8 */
    fe_mul(&t1, &t1, z);       /* 9 */
    fe_mul(&t0, &t0, &t1);     /* 11 */
    *z11 = t0;
    fe_sq(&t2, &t0);           /* 22 */
    fe_mul(&t1, &t1, &t2);     /* 31 = 2^5 - 1 */
    fe_sqn(&t2, &t1, 5);
    fe_mul(&t1, &t2, &t1);     /* 2^10 - 1 */
    fe_sqn(&t2, &t1, 10);
    fe_mul(&t2, &t2, &t1);     /* 2^20 - 1 */
    fe_sqn(&t3, &t2, 20);
    fe_mul(&t2, &t3, &t2);     /* 2^40 - 1 */
    fe_sqn(&t2, &t2, 10);
    fe_mul(&t1, &t2, &t1);     /* 2^50 - 1 */
    fe_sqn(&t2, &t1, 50);
    fe_mul(&t2, &t2, &t1);     /* 2^100 - 1 */
    fe_sqn(&t3, &t2, 100);
    fe_mul(&t2, &t3, &t2);     /* 2^200 - 1 */
    fe_sqn(&t2, &t2, 50);
    fe_mul(t250, &t2, &t1);    /* 2^250 - 1 */
}

/* z^(p - 2) = 1/z (0 for 0) */
static void fe_invert(fe *h, const fe *z) {
    fe t, z11;
    fe_pow250(&t, &z11, z);
    fe_sqn(&t, &t, 5);         /* 2^255 - 32 */
    fe_mul(h, &t, &z11);       /* 2^255 - 21 */
}

/* z^((p - 5) / 8) = z^(2^252 - 3) */
static void fe_pow22523(fe *h, const fe *z) {
    fe t, z11;
    fe_pow250(&t, &z11, z);
    fe_sqn(&t, &t, 2);         /* 2^252 - 4 */
    fe_mul(h, &t, z);
}

/* z^((p - 1) / 4) = z^(2^253 - 5): the quartic residue symbol of z, one of 1, -1, +-sqrt(-1)
 * (0 for 0) */
static void fe_pow_quartic(fe *h, const fe *z) {
    fe t, z11, z3;
    fe_pow250(&t, &z11, z);
    fe_sqn(&t, &t, 3);         /* 2^253 - 8 */
    fe_sq(&z3, z);
    fe_mul(&z3, &z3, z);
    fe_mul(h, &t, &z3);        /* 2^253 - 5 */
}

static int fe_iszero(const fe *f) {
    uint8_t s[32];
    fe_tobytes(s, f);
    uint8_t r = 0;
    for (int i = 0; i < 32; i++) r |= s[i];
    return r == 0;
}

static int fe_equal(const fe *f, const fe *g) {
    uint8_t a[32], b[32];
    fe_tobytes(a, f);
    fe_tobytes(b, g);
    return memcmp(a, b, 32) == 0;
}

static int fe_isodd(const fe *f) {
    uint8_t s[32];
    fe_tobytes(s, f);
    return s[0] & 1;
}

/* ---------------------------------------------------------------- points */

typedef struct { fe X, Y, Z, T; } ge_ext;        /* x = X/Z, y = Y/Z, xy = T/Z */
typedef struct { fe X, Y, Z; } ge_proj;
typedef struct { fe E, F, G, H; } ge_done;       /* X = EF, Y = GH, Z = FG, T = EH */
typedef struct { fe YpX, YmX, T2d, Z2; } ge_cached; /* Y+X, Y-X, 2dT, 2Z */
typedef struct { fe YpX, YmX, T2d; } ge_affc;    /* the same with Z = 1 */

static void ge_ident(ge_ext *p) {
    fe_0(&p->X); fe_1(&p->Y); fe_1(&p->Z); fe_0(&p->T);
}

static void done_to_ext(ge_ext *r, const ge_done *d) {
    fe_mul(&r->X, &d->E, &d->F);
    fe_mul(&r->Y, &d->G, &d->H);
    fe_mul(&r->Z, &d->F, &d->G);
    fe_mul(&r->T, &d->E, &d->H);
}

static void done_to_proj(ge_proj *r, const ge_done *d) {
    fe_mul(&r->X, &d->E, &d->F);
    fe_mul(&r->Y, &d->G, &d->H);
    fe_mul(&r->Z, &d->F, &d->G);
}

/* dbl-2008-hwcd with a = -1 */
static void ge_dbl(ge_done *r, const ge_proj *p) {
    fe A, B, C, s, t;
    fe_sq(&A, &p->X);
    fe_sq(&B, &p->Y);
    fe_sq(&C, &p->Z);
    fe_add(&C, &C, &C);
    fe_add(&s, &p->X, &p->Y);
    fe_sq(&s, &s);
    fe_add(&t, &A, &B);
    fe_sub(&r->E, &s, &t);      /* E = (X+Y)^2 - A - B */
    fe_sub(&r->G, &B, &A);      /* G = B - A */
    fe_sub(&r->F, &r->G, &C);   /* F = G - C */
    fe_neg(&r->H, &t);          /* H = -A - B */
}

static void ext_to_proj(ge_proj *r, const ge_ext *p) {
    r->X = p->X; r->Y = p->Y; r->Z = p->Z;
}

static void ext_to_cached(ge_cached *r, const ge_ext *p) {
    fe_add(&r->YpX, &p->Y, &p->X);
    fe_sub(&r->YmX, &p->Y, &p->X);
    fe_mul(&r->T2d, &p->T, &FE_D2);
    fe_add(&r->Z2, &p->Z, &p->Z);
}

/* add-2008-hwcd-3: p + q (sign -1: p - q) */
static void ge_add_cached(ge_done *r, const ge_ext *p, const ge_cached *q, int neg) {
    fe A, B, C, D, s;
    fe_sub(&s, &p->Y, &p->X);
    fe_mul(&A, &s, neg ? &q->YpX : &q->YmX);
    fe_add(&s, &p->Y, &p->X);
    fe_mul(&B, &s, neg ? &q->YmX : &q->YpX);
    fe_mul(&C, &p->T, &q->T2d);
    fe_mul(&D, &p->Z, &q->Z2);
    fe_sub(&r->E, &B, &A);
    fe_add(&r->H, &B, &A);
    if (neg) {
        fe_add(&r->F, &D, &C);
        fe_sub(&r->G, &D, &C);
    } else {
        fe_sub(&r->F, &D, &C);
        fe_add(&r->G, &D, &C);
    }
    fe_carry(&r->H);
    fe_carry(&r->G);
}

static void ge_add_affc(ge_done *r, const ge_ext *p, const ge_affc *q, int neg) {
    fe A, B, C, D, s;
    fe_sub(&s, &p->Y, &p->X);
    fe_mul(&A, &s, neg ? &q->YpX : &q->YmX);
    fe_add(&s, &p->Y, &p->X);
    fe_mul(&B, &s, neg ? &q->YmX : &q->YpX);
    fe_mul(&C, &p->T, &q->T2d);
    fe_add(&D, &p->Z, &p->Z);
    fe_sub(&r->E, &B, &A);
    fe_add(&r->H, &B, &A);
    if (neg) {
        fe_add(&r->F, &D, &C);
        fe_sub(&r->G, &D, &C);
    } else {
        fe_sub(&r->F, &D, &C);
        fe_add(&r->G, &D, &C);
    }
    fe_carry(&r->H);
    fe_carry(&r->G);
}

static void ge_add_ext(ge_ext *r, const ge_ext *p, const ge_ext *q) {
    ge_cached c;
    ge_done d;
    ext_to_cached(&c, q);
    ge_add_cached(&d, p, &c, 0);
    done_to_ext(r, &d);
}

/* n doublings of p in place (n >= 1) */
static void ge_dbl_n(ge_ext *p, int n) {
    ge_proj q;
    ge_done d;
    ext_to_proj(&q, p);
    for (int i = 0; i < n - 1; i++) {
        ge_dbl(&d, &q);
        done_to_proj(&q, &d);
    }
    ge_dbl(&d, &q);
    done_to_ext(p, &d);
}

static int ge_is_ident(const ge_ext *p) {
    return fe_iszero(&p->X) && fe_equal(&p->Y, &p->Z);
}

static void ge_to_affine(fe *x, fe *y, const ge_ext *p) {
    fe zi;
    fe_invert(&zi, &p->Z);
    fe_mul(x, &p->X, &zi);
    fe_mul(y, &p->Y, &zi);
}

static void ge_from_affine(ge_ext *p, const fe *x, const fe *y) {
    p->X = *x; p->Y = *y; fe_1(&p->Z);
    fe_mul(&p->T, x, y);
}

static void affc_from_affine(ge_affc *r, const fe *x, const fe *y) {
    fe t;
    fe_add(&r->YpX, y, x);
    fe_sub(&r->YmX, y, x);
    fe_mul(&t, x, y);
    fe_mul(&r->T2d, &t, &FE_D2);
}

/* RFC 8032 5.1.3: recover x; 0 on failure (y >= p, no square root, x = 0 with the sign bit) */
static int ge_decompress(fe *x, fe *y, const uint8_t *s) {
    uint8_t t[32], back[32];
    memcpy(t, s, 32);
    int sign = t[31] >> 7;
    t[31] &= 0x7f;
    fe_frombytes(y, t);
    fe_tobytes(back, y);
    if (memcmp(back, t, 32) != 0) return 0; /* y >= p */
    fe one, y2, u, v, v3, v7, w, vxx, nu;
    fe_1(&one);
    fe_sq(&y2, y);
    fe_sub(&u, &y2, &one);              /* u = y^2 - 1 */
    fe_mul(&v, &y2, &FE_D);
    fe_add(&v, &v, &one);               /* v = d y^2 + 1 */
    fe_carry(&v);
    fe_sq(&v3, &v);
    fe_mul(&v3, &v3, &v);               /* v^3 */
    fe_sq(&v7, &v3);
    fe_mul(&v7, &v7, &v);               /* v^7 */
    fe_mul(&w, &u, &v7);
    fe_pow22523(&w, &w);                /* (u v^7)^((p-5)/8) */
    fe_mul(&w, &w, &v3);
    fe_mul(x, &w, &u);                  /* x = u v^3 (u v^7)^((p-5)/8) */
    fe_sq(&vxx, x);
    fe_mul(&vxx, &vxx, &v);
    if (!fe_equal(&vxx, &u)) {
        fe_neg(&nu, &u);
        if (!fe_equal(&vxx, &nu)) return 0;
        fe_mul(x, x, &FE_SQRTM1);
    }
    int iszero = fe_iszero(x);
    if (iszero && sign) return 0;
    if (fe_isodd(x) != sign) fe_neg(x, x);
    return 1;
}

static void ge_compress(uint8_t *s, const fe *x, const fe *y) {
    fe_tobytes(s, y);
    s[31] |= (uint8_t)(fe_isodd(x) << 7);
}

/* ---------------------------------------------------------------- scalars */

/* signed radix-16 digits in [-8, 8) (the last in [0, 8]) of a 256-bit value below 2^255 */
static void radix16(signed char e[64], const uint8_t *a) {
    for (int i = 0; i < 32; i++) {
        e[2 * i] = (signed char)(a[i] & 15);
        e[2 * i + 1] = (signed char)(a[i] >> 4);
    }
    int carry = 0;
    for (int i = 0; i < 63; i++) {
        e[i] = (signed char)(e[i] + carry);
        carry = (e[i] + 8) >> 4;
        e[i] = (signed char)(e[i] - (carry << 4));
    }
    e[63] = (signed char)(e[63] + carry);
}

/* the table 1P .. 8P in cached form */
static void table8(ge_cached tab[8], const ge_ext *p) {
    ge_ext p2, cur;
    ge_done d;
    ext_to_cached(&tab[0], p);
    p2 = *p;
    ge_dbl_n(&p2, 1);
    ext_to_cached(&tab[1], &p2);
    cur = p2;
    for (int i = 2; i < 8; i++) {
        ge_add_cached(&d, &cur, &tab[0], 0);
        done_to_ext(&cur, &d);
        ext_to_cached(&tab[i], &cur);
    }
}

/* Straus: sum of k_i P_i over interleaved signed radix-16 windows */
static void msm_straus(ge_ext *r, const signed char (*dig)[64], const ge_ext *pts, Py_ssize_t n) {
    ge_cached (*tabs)[8] = malloc(sizeof(ge_cached[8]) * (size_t)(n ? n : 1));
    ge_ident(r);
    if (tabs == NULL) return;
    for (Py_ssize_t j = 0; j < n; j++) table8(tabs[j], &pts[j]);
    int started = 0;
    ge_done d;
    for (int i = 63; i >= 0; i--) {
        if (started) ge_dbl_n(r, 4);
        for (Py_ssize_t j = 0; j < n; j++) {
            int e = dig[j][i];
            if (e == 0) continue;
            if (e > 0) ge_add_cached(&d, r, &tabs[j][e - 1], 0);
            else ge_add_cached(&d, r, &tabs[j][-e - 1], 1);
            done_to_ext(r, &d);
            started = 1;
        }
    }
    free(tabs);
}

/* the signed base-2^c digits of a 256-bit value below 2^255, in [-2^(c-1), 2^(c-1)) */
static int signed_digits(int *out, const uint8_t *a, int c) {
    int w = (256 + c - 1) / c + 1;
    int carry = 0;
    int half = 1 << (c - 1);
    for (int i = 0; i < w; i++) {
        int bit = i * c, v = 0;
        for (int b = 0; b < c; b++) {
            int pos = bit + b;
            if (pos < 256 && (a[pos >> 3] >> (pos & 7)) & 1) v |= 1 << b;
        }
        v += carry;
        carry = v >= half;
        out[i] = carry ? v - (1 << c) : v;
    }
    return w;
}

/* Pippenger's buckets, window c bits */
static int msm_pippenger(ge_ext *r, const uint8_t *sc, const ge_affc *pts, Py_ssize_t n, int c) {
    int w = (256 + c - 1) / c + 1;
    int nb = 1 << (c - 1);
    int *digits = malloc(sizeof(int) * (size_t)w * (size_t)(n ? n : 1));
    ge_ext *buckets = malloc(sizeof(ge_ext) * (size_t)nb);
    char *used = malloc((size_t)nb);
    ge_ident(r);
    if (digits == NULL || buckets == NULL || used == NULL) {
        free(digits); free(buckets); free(used);
        return 0;
    }
    for (Py_ssize_t j = 0; j < n; j++) signed_digits(digits + (size_t)j * w, sc + 32 * j, c);
    ge_done d;
    int started = 0;
    for (int i = w - 1; i >= 0; i--) {
        if (started) ge_dbl_n(r, c);
        memset(used, 0, (size_t)nb);
        for (Py_ssize_t j = 0; j < n; j++) {
            int e = digits[(size_t)j * w + i];
            if (e == 0) continue;
            int b = (e > 0 ? e : -e) - 1;
            if (!used[b]) {
                ge_ident(&buckets[b]);
                used[b] = 1;
            }
            ge_add_affc(&d, &buckets[b], &pts[j], e < 0);
            done_to_ext(&buckets[b], &d);
        }
        /* sum_b (b+1) * bucket_b by running sums, from the top */
        ge_ext run, tot;
        int run_set = 0, tot_set = 0;
        for (int b = nb - 1; b >= 0; b--) {
            if (used[b]) {
                if (run_set) ge_add_ext(&run, &run, &buckets[b]);
                else { run = buckets[b]; run_set = 1; }
            }
            if (run_set) {
                if (tot_set) ge_add_ext(&tot, &tot, &run);
                else { tot = run; tot_set = 1; }
            }
        }
        if (tot_set) {
            ge_add_ext(r, r, &tot);
            started = 1;
        }
    }
    free(digits); free(buckets); free(used);
    return 1;
}

/* Membership of the prime-order subgroup by halving (x, y: a decoded point with x != 0).
 *
 * The group E of the curve's points over GF(p) is cyclic of order 8 l (its only rational point of
 * order 2 is (0, -1), and it has rational points of order 8), so the subgroup of order l is 8E:
 * a point is in it iff it can be halved three times (T. Pornin, "Point-Halving and Subgroup
 * Membership in Twisted Edwards Curves", IACR ePrint 2022/1164). Decided here with one square root
 * and one quartic residue symbol instead of a multiplication by l:
 *
 * 1. The Montgomery form v^2 = u (u^2 + A u + 1), u = (1 + y)/(1 - y), v = C0 u/x. Let phi be the
 *    2-isogeny with kernel {O, (0, 0)} to E': Y^2 = X (X^2 - 2A X + A^2 - 4)
 *    = X (X - (A + 2)) (X - (A - 2)), and phi' its dual, phi'(X, Y) = (Y^2 / (4 X^2), ...), so that
 *    phi' phi = [2]. Then phi'(E') = 2E, and a preimage R of P exists iff u is a square s^2
 *    (Y = 2 s X; X solves X^2 - (2A + 4u) X + A^2 - 4 = 0, X = A + 2u + 2m with m = v/s = C0 s/x,
 *    since m^2 = u^2 + A u + 1). No square root of u: P is not in 2E (odd multiple of a torsion
 *    point of order 8 added): refused.
 * 2. phi' has kernel {O, T'}, T' = (0, 0) on E', and maps E'(GF(p)) onto 2E, so
 *    E'/H ~ 2E/8E ~ Z/4 with H = phi'^-1(8E) = 4E' + {O, T'}. The reduced Tate pairing
 *    t4(S, R) = f_S(R)^((p-1)/4) (the 4th roots of unity are in GF(p), p = 1 mod 4), with S a
 *    point of E' of order 4 (2S = (A + 2, 0)) and f_S = l_S^2 / (X - (A + 2)) of divisor
 *    4(S) - 4(O) (l_S: the tangent at S), is a character of order 4 of E' (non-degeneracy) that
 *    is 1 on 4E' and on T' (t4(S, T') = 1 for this S: checked in tests/deck/test_edwards.py), so
 *    its kernel is H: P in 8E iff t4(S, R) = 1, whichever preimage R of +-P was taken. It is
 *    evaluated without inversion: with N = x X, f_S(R) = ln^2 / (x (N - (A + 2) x)),
 *    ln = 2 s N - YS x - LAMS (N - XS x), and the symbol of ln^2 (x (N - (A + 2) x))^3. A zero
 *    means R = S or R = 2S: P of order 4 or 2, refused.
 * Public values only: not constant-time. */
static int ge_halvable3(const fe *x, const fe *y) {
    fe one, n, d, d3, d7, w, ddw, nn, s, N, t, ln, den, z, q;
    fe_1(&one);
    fe_add(&n, &one, y);
    fe_carry(&n);                       /* n = 1 + y */
    fe_sub(&d, &one, y);                /* d = 1 - y, not 0 (x != 0) */
    fe_sq(&d3, &d);
    fe_mul(&d3, &d3, &d);               /* d^3 */
    fe_sq(&d7, &d3);
    fe_mul(&d7, &d7, &d);               /* d^7 */
    fe_mul(&w, &n, &d7);
    fe_pow22523(&w, &w);                /* (n d^7)^((p-5)/8) */
    fe_mul(&w, &w, &d3);
    fe_mul(&s, &w, &n);                 /* s = n d^3 (n d^7)^((p-5)/8), s^2 = +-u when u is a square */
    fe_sq(&ddw, &s);
    fe_mul(&ddw, &ddw, &d);
    if (!fe_equal(&ddw, &n)) {
        fe_neg(&nn, &n);
        if (!fe_equal(&ddw, &nn)) return 0; /* u is not a square: P is not in 2E */
        fe_mul(&s, &s, &FE_SQRTM1);
    }
    /* N = x X = A x + 2 s^2 x + 2 C0 s */
    fe_sq(&t, &s);
    fe_add(&t, &t, &t);
    fe_add(&t, &t, &FE_MONT_A);
    fe_carry(&t);
    fe_mul(&N, &t, x);
    fe_mul(&t, &FE_C0, &s);
    fe_add(&t, &t, &t);
    fe_add(&N, &N, &t);
    fe_carry(&N);
    /* ln = 2 s N - YS x - LAMS (N - XS x) */
    fe_mul(&t, &FE_XS, x);
    fe_sub(&t, &N, &t);
    fe_mul(&t, &t, &FE_LAMS);
    fe_mul(&ln, &s, &N);
    fe_add(&ln, &ln, &ln);
    fe_carry(&ln);
    fe_sub(&ln, &ln, &t);
    fe_mul(&t, &FE_YS, x);
    fe_sub(&ln, &ln, &t);
    /* den = x (N - (A + 2) x) */
    fe_mul(&t, &FE_E1, x);
    fe_sub(&den, &N, &t);
    fe_mul(&den, &den, x);
    /* z = ln^2 den^3 */
    fe_sq(&z, &den);
    fe_mul(&z, &z, &den);
    fe_sq(&t, &ln);
    fe_mul(&z, &z, &t);
    if (fe_iszero(&z)) return 0;
    fe_pow_quartic(&q, &z);
    return fe_equal(&q, &one);
}

/* l * P == identity (P decoded, on the curve): the test by multiplication, kept for comparison
 * (decode(enc, 1)) */
static int ge_in_subgroup(const ge_ext *p) {
    ge_cached tab[8];
    ge_ext r;
    ge_done d;
    table8(tab, p);
    ge_ident(&r);
    int started = 0;
    for (int i = 63; i >= 0; i--) {
        if (started) ge_dbl_n(&r, 4);
        int e = L_DIGITS[i];
        if (e == 0) continue;
        if (e > 0) ge_add_cached(&d, &r, &tab[e - 1], 0);
        else ge_add_cached(&d, &r, &tab[-e - 1], 1);
        done_to_ext(&r, &d);
        started = 1;
    }
    return ge_is_ident(&r);
}

/* ---------------------------------------------------------------- fixed-base tables */

#define COMB_ENTRIES (64 * 8)
#define COMB_BYTES (COMB_ENTRIES * (int)sizeof(ge_affc))

/* (j + 1) * 16^i * P for i < 64, j < 8, in affine cached form, row by row */
static int comb_build(ge_affc *out, const ge_ext *p) {
    ge_ext *pts = malloc(sizeof(ge_ext) * COMB_ENTRIES);
    fe *prefix = malloc(sizeof(fe) * COMB_ENTRIES);
    if (pts == NULL || prefix == NULL) {
        free(pts); free(prefix);
        return 0;
    }
    ge_ext cur = *p;
    ge_done d;
    for (int i = 0; i < 64; i++) {
        ge_cached c1;
        ext_to_cached(&c1, &cur);
        pts[8 * i] = cur;
        for (int j = 1; j < 8; j++) {
            ge_add_cached(&d, &pts[8 * i + j - 1], &c1, 0);
            done_to_ext(&pts[8 * i + j], &d);
        }
        cur = pts[8 * i + 7];
        ge_dbl_n(&cur, 1); /* 16 * 16^i * P */
    }
    /* one inversion for all the Z (Montgomery's trick) */
    fe acc, inv;
    fe_1(&acc);
    for (int k = 0; k < COMB_ENTRIES; k++) {
        prefix[k] = acc;
        fe_mul(&acc, &acc, &pts[k].Z);
    }
    fe_invert(&inv, &acc);
    for (int k = COMB_ENTRIES - 1; k >= 0; k--) {
        fe zi, x, y;
        fe_mul(&zi, &inv, &prefix[k]);
        fe_mul(&inv, &inv, &pts[k].Z);
        fe_mul(&x, &pts[k].X, &zi);
        fe_mul(&y, &pts[k].Y, &zi);
        affc_from_affine(&out[k], &x, &y);
    }
    free(pts);
    free(prefix);
    return 1;
}

/* ---------------------------------------------------------------- Python interface */

static PyObject *py_decode(PyObject *self, PyObject *args) {
    const uint8_t *enc;
    Py_ssize_t len;
    int by_order = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y#|p", &enc, &len, &by_order)) return NULL;
    if (len % 32 != 0) {
        PyErr_SetString(PyExc_ValueError, "encodings are 32 bytes each");
        return NULL;
    }
    Py_ssize_t n = len / 32, bad = -1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, 64 * n);
    if (out == NULL) return NULL;
    uint8_t *xy = (uint8_t *)PyBytes_AS_STRING(out);
    memset(xy, 0, (size_t)(64 * n));
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        fe x, y;
        ge_ext p;
        if (!ge_decompress(&x, &y, enc + 32 * i)) { bad = i; break; }
        ge_from_affine(&p, &x, &y);
        if (fe_iszero(&x)) { bad = i; break; }
        if (by_order ? !ge_in_subgroup(&p) : !ge_halvable3(&x, &y)) { bad = i; break; }
        fe_tobytes(xy + 64 * i, &x);
        fe_tobytes(xy + 64 * i + 32, &y);
    }
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(nN)", bad, out);
}

static PyObject *py_msm(PyObject *self, PyObject *args) {
    const uint8_t *sc, *xy;
    Py_ssize_t ls, lp;
    int algo = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y#y#|i", &sc, &ls, &xy, &lp, &algo)) return NULL;
    if (ls % 32 != 0 || lp % 64 != 0 || ls / 32 != lp / 64) {
        PyErr_SetString(PyExc_ValueError, "need n 32-byte scalars and n 64-byte points");
        return NULL;
    }
    Py_ssize_t n = ls / 32;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (sc[32 * j + 31] & 0x80) {
            PyErr_SetString(PyExc_ValueError, "scalars must be below 2^255");
            return NULL;
        }
    }
    if (algo == 0) algo = n < 190 ? 1 : 2;
    ge_ext r;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    if (algo == 1) {
        ge_ext *pts = malloc(sizeof(ge_ext) * (size_t)(n ? n : 1));
        signed char (*dig)[64] = malloc(64 * (size_t)(n ? n : 1));
        if (pts == NULL || dig == NULL) ok = 0;
        else {
            for (Py_ssize_t j = 0; j < n; j++) {
                fe x, y;
                fe_frombytes(&x, xy + 64 * j);
                fe_frombytes(&y, xy + 64 * j + 32);
                ge_from_affine(&pts[j], &x, &y);
                radix16(dig[j], sc + 32 * j);
            }
            msm_straus(&r, (const signed char (*)[64])dig, pts, n);
        }
        free(pts);
        free(dig);
    } else {
        ge_affc *pts = malloc(sizeof(ge_affc) * (size_t)(n ? n : 1));
        if (pts == NULL) ok = 0;
        else {
            for (Py_ssize_t j = 0; j < n; j++) {
                fe x, y;
                fe_frombytes(&x, xy + 64 * j);
                fe_frombytes(&y, xy + 64 * j + 32);
                affc_from_affine(&pts[j], &x, &y);
            }
            int c = n < 500 ? 7 : n < 2000 ? 8 : n < 8000 ? 10 : 12;
            ok = msm_pippenger(&r, sc, pts, n, c);
        }
        free(pts);
    }
    Py_END_ALLOW_THREADS
    if (!ok) return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, 96);
    if (out == NULL) return NULL;
    uint8_t *o = (uint8_t *)PyBytes_AS_STRING(out);
    fe x, y;
    ge_to_affine(&x, &y, &r);
    ge_compress(o, &x, &y);
    fe_tobytes(o + 32, &x);
    fe_tobytes(o + 64, &y);
    return out;
}

static PyObject *py_comb_table(PyObject *self, PyObject *args) {
    const uint8_t *xy;
    Py_ssize_t len;
    (void)self;
    if (!PyArg_ParseTuple(args, "y#", &xy, &len)) return NULL;
    if (len != 64) {
        PyErr_SetString(PyExc_ValueError, "need one 64-byte point");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, COMB_BYTES);
    if (out == NULL) return NULL;
    fe x, y;
    ge_ext p;
    fe_frombytes(&x, xy);
    fe_frombytes(&y, xy + 32);
    ge_from_affine(&p, &x, &y);
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = comb_build((ge_affc *)PyBytes_AS_STRING(out), &p);
    Py_END_ALLOW_THREADS
    if (!ok) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    return out;
}

static PyObject *py_comb_msm(PyObject *self, PyObject *args) {
    const uint8_t *sc;
    Py_ssize_t ls;
    PyObject *tables;
    (void)self;
    if (!PyArg_ParseTuple(args, "y#O!", &sc, &ls, &PyTuple_Type, &tables)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tables);
    if (ls != 32 * n) {
        PyErr_SetString(PyExc_ValueError, "need one 32-byte scalar per table");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *t = PyTuple_GET_ITEM(tables, j);
        if (!PyBytes_Check(t) || PyBytes_GET_SIZE(t) != COMB_BYTES) {
            PyErr_SetString(PyExc_ValueError, "not a fixed-base table");
            return NULL;
        }
        if (sc[32 * j + 31] & 0x80) {
            PyErr_SetString(PyExc_ValueError, "scalars must be below 2^255");
            return NULL;
        }
    }
    ge_ext r;
    ge_done d;
    ge_ident(&r);
    for (Py_ssize_t j = 0; j < n; j++) {
        const ge_affc *tab = (const ge_affc *)PyBytes_AS_STRING(PyTuple_GET_ITEM(tables, j));
        signed char e[64];
        radix16(e, sc + 32 * j);
        for (int i = 0; i < 64; i++) {
            if (e[i] == 0) continue;
            if (e[i] > 0) ge_add_affc(&d, &r, &tab[8 * i + e[i] - 1], 0);
            else ge_add_affc(&d, &r, &tab[8 * i - e[i] - 1], 1);
            done_to_ext(&r, &d);
        }
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, 96);
    if (out == NULL) return NULL;
    uint8_t *o = (uint8_t *)PyBytes_AS_STRING(out);
    fe x, y;
    ge_to_affine(&x, &y, &r);
    ge_compress(o, &x, &y);
    fe_tobytes(o + 32, &x);
    fe_tobytes(o + 64, &y);
    return out;
}

static PyMethodDef METHODS[] = {
    {"comb_table", py_comb_table, METH_VARARGS,
     "comb_table(xy) -> the fixed-base table of one point ((j+1) * 16^i * P, i < 64, j < 8)"},
    {"comb_msm", py_comb_msm, METH_VARARGS,
     "comb_msm(scalars, tables) -> enc || xy of sum k_i P_i from the points' fixed-base tables"},
    {"decode", py_decode, METH_VARARGS,
     "decode(enc, by_order=False) -> (bad, xy): validate 32-byte encodings (canonical, on the "
     "curve, not the identity, in the prime-order subgroup: by halving, or with by_order by "
     "l * P = O); bad is the index of the first refused (-1: none)"},
    {"msm", py_msm, METH_VARARGS,
     "msm(scalars, xy, algo=0) -> enc || xy of sum k_i P_i (algo 1 Straus, 2 Pippenger)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_edwards",
    "Variable-time arithmetic on public elements of the Ed25519 prime-order subgroup.", -1,
    METHODS, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__edwards(void) {
    fe_frombytes(&FE_D, D_BYTES);
    fe_frombytes(&FE_D2, D2_BYTES);
    fe_frombytes(&FE_SQRTM1, SQRTM1_BYTES);
    fe_frombytes(&FE_MONT_A, MONT_A_BYTES);
    fe_frombytes(&FE_E1, E1_BYTES);
    fe_frombytes(&FE_C0, C0_BYTES);
    fe_frombytes(&FE_XS, XS_BYTES);
    fe_frombytes(&FE_YS, YS_BYTES);
    fe_frombytes(&FE_LAMS, LAMS_BYTES);
    radix16(L_DIGITS, L_BYTES);
    PyObject *m = PyModule_Create(&MODULE);
    if (m == NULL) return NULL;
#ifndef EDWARDS_SOURCE_SHA256
#define EDWARDS_SOURCE_SHA256 ""
#endif
    if (PyModule_AddStringConstant(m, "SOURCE_SHA256", EDWARDS_SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
