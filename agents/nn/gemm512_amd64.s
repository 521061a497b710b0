//go:build amd64 && !purego && !netlib

#include "textflag.h"

// AVX-512 forms of the kernels of gemm_amd64.s, twice as wide, with the
// same arithmetic: one rounded multiply and one rounded add per element per
// step. A zero a value leaves its row of c as it is by a merge-masked add
// (K1), so the masked form costs one compare more than the plain one.

// ROW32 adds the broadcast of *ap times Z8:Z9 to acc0:acc1 where *ap != 0.
#define ROW32(ap, acc0, acc1) \
	VBROADCASTSS (ap), Z10; \
	VCMPPS $4, Z12, Z10, K1; \
	VMULPS Z10, Z8, Z14; \
	VADDPS acc0, Z14, K1, acc0; \
	VMULPS Z10, Z9, Z15; \
	VADDPS acc1, Z15, K1, acc1

// FAST32 is ROW32 when *ap is known not to be zero.
#define FAST32(ap, acc0, acc1) \
	VBROADCASTSS (ap), Z10; \
	VMULPS Z10, Z8, Z14; \
	VADDPS acc0, Z14, acc0; \
	VMULPS Z10, Z9, Z15; \
	VADDPS acc1, Z15, acc1

// func tile4x32(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)
TEXT ·tile4x32(SB), NOSPLIT, $0-88
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
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	ADDQ    DX, AX
	VMOVUPS (AX), Z2
	VMOVUPS 64(AX), Z3
	ADDQ    DX, AX
	VMOVUPS (AX), Z4
	VMOVUPS 64(AX), Z5
	ADDQ    DX, AX
	VMOVUPS (AX), Z6
	VMOVUPS 64(AX), Z7
	VPXORD  Z12, Z12, Z12
	MOVQ    blend+80(FP), AX
	TESTQ   AX, AX
	JNZ     slow32

fast32:
	VMOVUPS (SI), Z8
	VMOVUPS 64(SI), Z9
	FAST32(R8, Z0, Z1)
	FAST32(R9, Z2, Z3)
	FAST32(R10, Z4, Z5)
	FAST32(R11, Z6, Z7)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     fast32
	JMP     store32

slow32:
	VMOVUPS (SI), Z8
	VMOVUPS 64(SI), Z9
	ROW32(R8, Z0, Z1)
	ROW32(R9, Z2, Z3)
	ROW32(R10, Z4, Z5)
	ROW32(R11, Z6, Z7)
	ADDQ    R12, R8
	ADDQ    R12, R9
	ADDQ    R12, R10
	ADDQ    R12, R11
	ADDQ    R13, SI
	DECQ    CX
	JNZ     slow32

store32:
	MOVQ    DI, AX
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	ADDQ    DX, AX
	VMOVUPS Z2, (AX)
	VMOVUPS Z3, 64(AX)
	ADDQ    DX, AX
	VMOVUPS Z4, (AX)
	VMOVUPS Z5, 64(AX)
	ADDQ    DX, AX
	VMOVUPS Z6, (AX)
	VMOVUPS Z7, 64(AX)
	VZEROUPPER
	RET

// DOTEL16 is gemm_amd64.s's DOTEL for 16 columns.
#define DOTEL16(xoff, acc) \
	VBROADCASTSS xoff(R8), Z8; \
	VMULPS (R9), Z8, Z9; \
	VADDPS Z9, acc, acc; \
	ADDQ R11, R9

// func dotTile16(m int, x *float32, ldx uintptr, wt *float32, ldwt uintptr, c *float32, ldc uintptr, t, chunks, tail4, tail1 int)
//
// dotTile16 is dotTile8 (gemm_amd64.s) for 16 adjacent columns of c.
TEXT ·dotTile16(SB), NOSPLIT, $0-88
	MOVQ m+0(FP), R12
	MOVQ x+8(FP), R13
	MOVQ ldx+16(FP), BX
	MOVQ wt+24(FP), R10
	MOVQ ldwt+32(FP), R11
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), DX

row16:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   R13, R8
	MOVQ   R10, R9

	MOVQ  t+56(FP), CX
	TESTQ CX, CX
	JZ    chunks16

trim16:
	DOTEL16(0, Z0)
	ADDQ $4, R8
	DECQ CX
	JNZ  trim16

chunks16:
	MOVQ  chunks+64(FP), CX
	TESTQ CX, CX
	JZ    tail416

chunk16:
	DOTEL16(0, Z0)
	DOTEL16(4, Z1)
	DOTEL16(8, Z2)
	DOTEL16(12, Z3)
	DOTEL16(16, Z4)
	DOTEL16(20, Z5)
	DOTEL16(24, Z6)
	DOTEL16(28, Z7)
	DOTEL16(32, Z0)
	DOTEL16(36, Z1)
	DOTEL16(40, Z2)
	DOTEL16(44, Z3)
	DOTEL16(48, Z4)
	DOTEL16(52, Z5)
	DOTEL16(56, Z6)
	DOTEL16(60, Z7)
	ADDQ   $64, R8
	DECQ   CX
	JNZ    chunk16
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3

tail416:
	MOVQ  tail4+72(FP), CX
	TESTQ CX, CX
	JZ    tail116

quad16:
	DOTEL16(0, Z0)
	DOTEL16(4, Z1)
	DOTEL16(8, Z2)
	DOTEL16(12, Z3)
	ADDQ $16, R8
	DECQ CX
	JNZ  quad16

tail116:
	MOVQ  tail1+80(FP), CX
	TESTQ CX, CX
	JZ    sum16

single16:
	DOTEL16(0, Z0)
	ADDQ $4, R8
	DECQ CX
	JNZ  single16

sum16:
	VADDPS  Z1, Z0, Z0
	VADDPS  Z3, Z2, Z2
	VADDPS  Z2, Z0, Z0
	VMOVUPS (DI), Z1
	VADDPS  Z0, Z1, Z1
	VMOVUPS Z1, (DI)

	ADDQ BX, R13
	ADDQ DX, DI
	DECQ R12
	JNZ  row16

	VZEROUPPER
	RET
