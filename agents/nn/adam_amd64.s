//go:build amd64 && !purego && !netlib

#include "textflag.h"

// func adamKernel(val, grad, m, v *float32, n int, k *[8]float32)
//
// One Adam step for n parameters (n a multiple of 8), with k = b1, 1-b1,
// b2, 1-b2, sqrt(bias correction 2), eps, step size: the float32
// operations of Adam.Step's loop, one for one and in its order (sqrt in
// float32 equals float32(math.Sqrt(float64)) exactly: double rounding is
// harmless for sqrt from 53 to 24 bits).
TEXT ·adamKernel(SB), NOSPLIT, $0-48
	MOVQ val+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), AX
	SHRQ $3, CX
	JZ   adone
	VBROADCASTSS 0(AX), Y10  // b1
	VBROADCASTSS 4(AX), Y11  // 1-b1
	VBROADCASTSS 8(AX), Y12  // b2
	VBROADCASTSS 12(AX), Y13 // 1-b2
	VBROADCASTSS 16(AX), Y14 // bc2Sqrt
	VBROADCASTSS 20(AX), Y15 // eps
	VBROADCASTSS 24(AX), Y9  // stepSize

aloop:
	VMOVUPS (SI), Y0       // g
	VMULPS  (R8), Y10, Y1  // b1*m
	VMULPS  Y0, Y11, Y2    // (1-b1)*g
	VADDPS  Y2, Y1, Y1     // mi
	VMOVUPS Y1, (R8)
	VMULPS  (R9), Y12, Y3  // b2*v
	VMULPS  Y0, Y13, Y4    // (1-b2)*g
	VMULPS  Y0, Y4, Y4     // *g
	VADDPS  Y4, Y3, Y3     // vi
	VMOVUPS Y3, (R9)
	VSQRTPS Y3, Y3
	VDIVPS  Y14, Y3, Y3    // sqrt(vi)/bc2Sqrt
	VADDPS  Y15, Y3, Y3    // denom
	VMULPS  Y1, Y9, Y1     // stepSize*mi
	VDIVPS  Y3, Y1, Y1     // /denom
	VMOVUPS (DI), Y5
	VSUBPS  Y1, Y5, Y5     // val - ...
	VMOVUPS Y5, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	DECQ    CX
	JNZ     aloop

adone:
	VZEROUPPER
	RET
