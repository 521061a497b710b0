//go:build amd64 && !purego && !netlib

#include "textflag.h"

// AVX2 micro-kernels for c += a·b (see gemm_fast.go). Every element of c is
// updated once per l, in increasing l, as c + a(i,l)*b(l,j) with separate
// rounded multiply and add (no FMA), and left unchanged where a(i,l) == 0:
// exactly gonum's AxpyUnitary-based Sgemm, lane by lane. With blend == 0
// (the caller has checked, with anyZero, that a has no zeros) the update is
// a plain multiply and add; otherwise it is masked (VBLENDVPS) where
// a(i,l) == 0.

// ROW16 updates two accumulators (16 columns of one row of c) with the
// broadcast of *ap times Y8:Y9, keeping them where *ap == 0.
#define ROW16(ap, acc0, acc1) \
	VBROADCASTSS (ap), Y10; \
	VCMPPS $4, Y12, Y10, Y13; \
	VMULPS Y10, Y8, Y14; \
	VADDPS acc0, Y14, Y14; \
	VBLENDVPS Y13, Y14, acc0, acc0; \
	VMULPS Y10, Y9, Y15; \
	VADDPS acc1, Y15, Y15; \
	VBLENDVPS Y13, Y15, acc1, acc1

// FAST16 is ROW16 when *ap is known not to be zero.
#define FAST16(ap, acc0, acc1) \
	VBROADCASTSS (ap), Y10; \
	VMULPS Y10, Y8, Y14; \
	VADDPS acc0, Y14, acc0; \
	VMULPS Y10, Y9, Y15; \
	VADDPS acc1, Y15, acc1

// FAST8 is FAST16 for 8 columns.
#define FAST8(ap, acc0) \
	VBROADCASTSS (ap), Y10; \
	VMULPS Y10, Y8, Y14; \
	VADDPS acc0, Y14, acc0

// ROW8 is ROW16 for 8 columns (Y8 only).
#define ROW8(ap, acc0) \
	VBROADCASTSS (ap), Y10; \
	VCMPPS $4, Y12, Y10, Y13; \
	VMULPS Y10, Y8, Y14; \
	VADDPS acc0, Y14, Y14; \
	VBLENDVPS Y13, Y14, acc0, acc0

// func tile4x16(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)
TEXT ·tile4x16(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ sal+40(FP), R12
	MOVQ b+48(FP), SI
	MOVQ ldb+56(FP), R13
	MOVQ c+64(FP), DI
	MOVQ ldc+72(FP), DX

	MOVQ    DI, AX
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	ADDQ    DX, AX
	VMOVUPS (AX), Y2
	VMOVUPS 32(AX), Y3
	ADDQ    DX, AX
	VMOVUPS (AX), Y4
	VMOVUPS 32(AX), Y5
	ADDQ    DX, AX
	VMOVUPS (AX), Y6
	VMOVUPS 32(AX), Y7
	VXORPS  Y12, Y12, Y12

	MOVQ    blend+80(FP), AX
	TESTQ   AX, AX
	JNZ     slow16

fast16:
	VMOVUPS (SI), Y8
	VMOVUPS 32(SI), Y9
	FAST16(R8, Y0, Y1)
	FAST16(R9, Y2, Y3)
	FAST16(R10, Y4, Y5)
	FAST16(R11, Y6, Y7)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     fast16
	JMP     store16

slow16:
	VMOVUPS (SI), Y8
	VMOVUPS 32(SI), Y9
	ROW16(R8, Y0, Y1)
	ROW16(R9, Y2, Y3)
	ROW16(R10, Y4, Y5)
	ROW16(R11, Y6, Y7)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     slow16

store16:

	MOVQ    DI, AX
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, 32(AX)
	ADDQ    DX, AX
	VMOVUPS Y2, (AX)
	VMOVUPS Y3, 32(AX)
	ADDQ    DX, AX
	VMOVUPS Y4, (AX)
	VMOVUPS Y5, 32(AX)
	ADDQ    DX, AX
	VMOVUPS Y6, (AX)
	VMOVUPS Y7, 32(AX)
	VZEROUPPER
	RET

// func tile4x8(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)
TEXT ·tile4x8(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ sal+40(FP), R12
	MOVQ b+48(FP), SI
	MOVQ ldb+56(FP), R13
	MOVQ c+64(FP), DI
	MOVQ ldc+72(FP), DX

	MOVQ    DI, AX
	VMOVUPS (AX), Y0
	ADDQ    DX, AX
	VMOVUPS (AX), Y1
	ADDQ    DX, AX
	VMOVUPS (AX), Y2
	ADDQ    DX, AX
	VMOVUPS (AX), Y3
	VXORPS  Y12, Y12, Y12

	MOVQ    blend+80(FP), AX
	TESTQ   AX, AX
	JNZ     slow8

fast8:
	VMOVUPS (SI), Y8
	FAST8(R8, Y0)
	FAST8(R9, Y1)
	FAST8(R10, Y2)
	FAST8(R11, Y3)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     fast8
	JMP     store8

slow8:
	VMOVUPS (SI), Y8
	ROW8(R8, Y0)
	ROW8(R9, Y1)
	ROW8(R10, Y2)
	ROW8(R11, Y3)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     slow8

store8:

	MOVQ    DI, AX
	VMOVUPS Y0, (AX)
	ADDQ    DX, AX
	VMOVUPS Y1, (AX)
	ADDQ    DX, AX
	VMOVUPS Y2, (AX)
	ADDQ    DX, AX
	VMOVUPS Y3, (AX)
	VZEROUPPER
	RET

// func tile1x8(k int, a0 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, blend int)
TEXT ·tile1x8(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ sal+16(FP), R12
	MOVQ b+24(FP), SI
	MOVQ ldb+32(FP), R13
	MOVQ c+40(FP), DI

	VMOVUPS (DI), Y0
	VXORPS  Y12, Y12, Y12

	MOVQ    blend+48(FP), AX
	TESTQ   AX, AX
	JNZ     slow1

fast1:
	VMOVUPS (SI), Y8
	FAST8(R8, Y0)
	ADDQ    R12, R8
	ADDQ    R13, SI
	DECQ    CX
	JNZ     fast1
	JMP     store1

slow1:
	VMOVUPS (SI), Y8
	ROW8(R8, Y0)
	ADDQ    R12, R8
	ADDQ    R13, SI
	DECQ    CX
	JNZ     slow1

store1:

	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET

// DOTEL adds x[xoff/4] (R8) times the current row of wt (R9, 8 columns)
// to acc and steps R9 to the next row of wt (R11 bytes on).
#define DOTEL(xoff, acc) \
	VBROADCASTSS xoff(R8), Y8; \
	VMULPS (R9), Y8, Y9; \
	VADDPS Y9, acc, acc; \
	ADDQ R11, R9

// func dotTile8(m int, x *float32, ldx uintptr, wt *float32, ldwt uintptr, c *float32, ldc uintptr, t, chunks, tail4, tail1 int, cstride uintptr)
//
// For each of m rows of x (ldx bytes apart) and 8 columns j of wt (a
// transposed weight, rows ldwt bytes apart), c(i,j) += the dot product of
// row i of x and column j of wt, summed exactly as gonum's DotUnitary
// (internal/asm/f32/dotunitary_amd64.s) sums it: t leading products into
// lane 0, then chunks of 16 into the four lanes of two partial sums (SUM
// takes products 0-3 and 8-11 of a chunk, P_SUM 4-7 and 12-15), SUM +=
// P_SUM if there was a chunk, tail4 groups of 4 into SUM's lanes, tail1
// products into lane 0, and the lanes added as HADDPS twice does:
// (s0+s1)+(s2+s3). Y0-Y3 hold SUM's lanes and Y4-Y7 P_SUM's, each for the
// 8 columns. The 8 columns of c are cstride bytes apart (4: adjacent).
TEXT ·dotTile8(SB), NOSPLIT, $0-96
	MOVQ m+0(FP), R12
	MOVQ x+8(FP), R13
	MOVQ ldx+16(FP), BX
	MOVQ wt+24(FP), R10
	MOVQ ldwt+32(FP), R11
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), DX

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   R13, R8
	MOVQ   R10, R9

	MOVQ t+56(FP), CX
	TESTQ CX, CX
	JZ   chunks

trim:
	DOTEL(0, Y0)
	ADDQ $4, R8
	DECQ CX
	JNZ  trim

chunks:
	MOVQ chunks+64(FP), CX
	TESTQ CX, CX
	JZ   tail4

chunk:
	DOTEL(0, Y0)
	DOTEL(4, Y1)
	DOTEL(8, Y2)
	DOTEL(12, Y3)
	DOTEL(16, Y4)
	DOTEL(20, Y5)
	DOTEL(24, Y6)
	DOTEL(28, Y7)
	DOTEL(32, Y0)
	DOTEL(36, Y1)
	DOTEL(40, Y2)
	DOTEL(44, Y3)
	DOTEL(48, Y4)
	DOTEL(52, Y5)
	DOTEL(56, Y6)
	DOTEL(60, Y7)
	ADDQ $64, R8
	DECQ CX
	JNZ  chunk
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3

tail4:
	MOVQ tail4+72(FP), CX
	TESTQ CX, CX
	JZ   tail1

quad:
	DOTEL(0, Y0)
	DOTEL(4, Y1)
	DOTEL(8, Y2)
	DOTEL(12, Y3)
	ADDQ $16, R8
	DECQ CX
	JNZ  quad

tail1:
	MOVQ tail1+80(FP), CX
	TESTQ CX, CX
	JZ   sum

single:
	DOTEL(0, Y0)
	ADDQ $4, R8
	DECQ CX
	JNZ  single

sum:
	VADDPS  Y1, Y0, Y0
	VADDPS  Y3, Y2, Y2
	VADDPS  Y2, Y0, Y0
	MOVQ    cstride+88(FP), SI
	CMPQ    SI, $4
	JNE     strided
	VMOVUPS (DI), Y1
	VADDPS  Y0, Y1, Y1
	VMOVUPS Y1, (DI)
	JMP     nextrow

strided: // the 8 columns of c are SI bytes apart
	MOVQ         DI, AX
	VMOVSS       (AX), X1
	ADDQ         SI, AX
	VINSERTPS    $0x10, (AX), X1, X1
	ADDQ         SI, AX
	VINSERTPS    $0x20, (AX), X1, X1
	ADDQ         SI, AX
	VINSERTPS    $0x30, (AX), X1, X1
	ADDQ         SI, AX
	VMOVSS       (AX), X2
	ADDQ         SI, AX
	VINSERTPS    $0x10, (AX), X2, X2
	ADDQ         SI, AX
	VINSERTPS    $0x20, (AX), X2, X2
	ADDQ         SI, AX
	VINSERTPS    $0x30, (AX), X2, X2
	VINSERTF128  $1, X2, Y1, Y1
	VADDPS       Y0, Y1, Y1
	VEXTRACTF128 $1, Y1, X2
	MOVQ         DI, AX
	VMOVSS       X1, (AX)
	ADDQ         SI, AX
	VEXTRACTPS   $1, X1, (AX)
	ADDQ         SI, AX
	VEXTRACTPS   $2, X1, (AX)
	ADDQ         SI, AX
	VEXTRACTPS   $3, X1, (AX)
	ADDQ         SI, AX
	VMOVSS       X2, (AX)
	ADDQ         SI, AX
	VEXTRACTPS   $1, X2, (AX)
	ADDQ         SI, AX
	VEXTRACTPS   $2, X2, (AX)
	ADDQ         SI, AX
	VEXTRACTPS   $3, X2, (AX)

nextrow:
	ADDQ BX, R13
	ADDQ DX, DI
	DECQ R12
	JNZ  row

	VZEROUPPER
	RET

// ROW4 and FAST4 are ROW8 and FAST8 for 4 columns (X registers).
#define ROW4(ap, acc0) \
	VBROADCASTSS (ap), X10; \
	VCMPPS $4, X12, X10, X13; \
	VMULPS X10, X8, X14; \
	VADDPS acc0, X14, X14; \
	VBLENDVPS X13, X14, acc0, acc0

#define FAST4(ap, acc0) \
	VBROADCASTSS (ap), X10; \
	VMULPS X10, X8, X14; \
	VADDPS acc0, X14, acc0

// func tile4x4(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)
TEXT ·tile4x4(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ sal+40(FP), R12
	MOVQ b+48(FP), SI
	MOVQ ldb+56(FP), R13
	MOVQ c+64(FP), DI
	MOVQ ldc+72(FP), DX

	MOVQ    DI, AX
	VMOVUPS (AX), X0
	ADDQ    DX, AX
	VMOVUPS (AX), X1
	ADDQ    DX, AX
	VMOVUPS (AX), X2
	ADDQ    DX, AX
	VMOVUPS (AX), X3
	VXORPS  X12, X12, X12

	MOVQ    blend+80(FP), AX
	TESTQ   AX, AX
	JNZ     slow4

fast4:
	VMOVUPS (SI), X8
	FAST4(R8, X0)
	FAST4(R9, X1)
	FAST4(R10, X2)
	FAST4(R11, X3)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     fast4
	JMP     store4

slow4:
	VMOVUPS (SI), X8
	ROW4(R8, X0)
	ROW4(R9, X1)
	ROW4(R10, X2)
	ROW4(R11, X3)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     slow4

store4:

	MOVQ    DI, AX
	VMOVUPS X0, (AX)
	ADDQ    DX, AX
	VMOVUPS X1, (AX)
	ADDQ    DX, AX
	VMOVUPS X2, (AX)
	ADDQ    DX, AX
	VMOVUPS X3, (AX)
	RET

// func anyZero(p *float32, n int) bool
//
// anyZero reports whether any of the n float32s at p is +0 or -0.
TEXT ·anyZero(SB), NOSPLIT, $0-17
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0 // zero
	VXORPS Y1, Y1, Y1 // any lane equal to zero so far
	CMPQ   CX, $8
	JB     ztail

z8:
	VCMPPS $0, (SI), Y0, Y2 // 0 == p[i] (ordered: false for NaN)
	VORPS  Y2, Y1, Y1
	ADDQ   $32, SI
	SUBQ   $8, CX
	CMPQ   CX, $8
	JAE    z8

ztail:
	TESTQ CX, CX
	JZ    zdone

z1:
	MOVL (SI), AX
	SHLL $1, AX // zero for +0 and -0 only
	JZ   zfound
	ADDQ $4, SI
	DECQ CX
	JNZ  z1

zdone:
	VPTEST Y1, Y1
	SETNE  AL
	MOVB   AL, ret+16(FP)
	VZEROUPPER
	RET

zfound:
	MOVB $1, ret+16(FP)
	VZEROUPPER
	RET

// func colTile8(k int, a *float32, sal uintptr, b *float32, ldb uintptr, c *[8]float32, blend int)
//
// colTile8 is the kernels' update for 8 rows of one column of c, for a
// whose rows are adjacent (aᵀ of a row-major matrix): c[r] += a(r,l)·b(l)
// for l in [0, k), a(r,l) at a + l*sal + 4r bytes, b(l) at b + l*ldb.
TEXT ·colTile8(SB), NOSPLIT, $0-56
	MOVQ    k+0(FP), CX
	MOVQ    a+8(FP), R8
	MOVQ    sal+16(FP), R12
	MOVQ    b+24(FP), SI
	MOVQ    ldb+32(FP), R13
	MOVQ    c+40(FP), DI
	VMOVUPS (DI), Y0
	VXORPS  Y12, Y12, Y12
	MOVQ    blend+48(FP), AX
	TESTQ   AX, AX
	JNZ     cslow

cfast:
	VMOVUPS      (R8), Y8
	VBROADCASTSS (SI), Y10
	VMULPS       Y8, Y10, Y14
	VADDPS       Y0, Y14, Y0
	ADDQ         R12, R8
	ADDQ         R13, SI
	DECQ         CX
	JNZ          cfast
	JMP          cstore

cslow:
	VMOVUPS      (R8), Y8
	VBROADCASTSS (SI), Y10
	VCMPPS       $4, Y12, Y8, Y13
	VMULPS       Y8, Y10, Y14
	VADDPS       Y0, Y14, Y14
	VBLENDVPS    Y13, Y14, Y0, Y0
	ADDQ         R12, R8
	ADDQ         R13, SI
	DECQ         CX
	JNZ          cslow

cstore:
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET
