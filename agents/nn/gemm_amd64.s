//go:build amd64 && !purego

#include "textflag.h"

// AVX2 micro-kernels for c += a·b (see gemm_fast.go). Every element of c is
// updated once per l, in increasing l, as c + a(i,l)*b(l,j) with separate
// rounded multiply and add (no FMA), and left unchanged where a(i,l) == 0:
// exactly gonum's AxpyUnitary-based Sgemm, lane by lane.

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

// ROW8 is ROW16 for 8 columns (Y8 only).
#define ROW8(ap, acc0) \
	VBROADCASTSS (ap), Y10; \
	VCMPPS $4, Y12, Y10, Y13; \
	VMULPS Y10, Y8, Y14; \
	VADDPS acc0, Y14, Y14; \
	VBLENDVPS Y13, Y14, acc0, acc0

// func tile4x16(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr)
TEXT ·tile4x16(SB), NOSPLIT, $0-80
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

loop16:
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
	JNZ     loop16

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

// func tile4x8(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr)
TEXT ·tile4x8(SB), NOSPLIT, $0-80
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

loop8:
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
	JNZ     loop8

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

// func tile1x8(k int, a0 *float32, sal uintptr, b *float32, ldb uintptr, c *float32)
TEXT ·tile1x8(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ sal+16(FP), R12
	MOVQ b+24(FP), SI
	MOVQ ldb+32(FP), R13
	MOVQ c+40(FP), DI

	VMOVUPS (DI), Y0
	VXORPS  Y12, Y12, Y12

loop1:
	VMOVUPS (SI), Y8
	ROW8(R8, Y0)
	ADDQ    R12, R8
	ADDQ    R13, SI
	DECQ    CX
	JNZ     loop1

	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET
