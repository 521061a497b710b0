//go:build amd64 && !purego && !netlib

#include "textflag.h"

// Constant rows of tanhConsts (tanh_amd64.go), 32 bytes each.
#define K_ABS    0
#define K_SIGN   32
#define K_LO     64
#define K_HI     96
#define K_LOG2E  128
#define K_LN2HI  160
#define K_LN2LO  192
#define K_C      224  // 14 rows: 1/13!, 1/12!, ..., 1/1!, 1
#define K_ONE    672
#define K_TWO    704
#define K_LOW29  736
#define K_HALF   768
#define K_G      800
#define K_NEGG   832

// func tanhKernel(dst, src *float32, groups int, flags *uint8, k *[tanhConstRows][4]uint64) (any uint8)
//
// For each group of 4 float32s of src it writes 4 candidates for
// float32(math.Tanh(x)) to dst and, in flags, a 4-bit mask of the lanes
// whose candidate must not be used: |x| 9.5 or more, or NaN, or a float64
// result within tanhGuard float64 ulps of a float32 rounding midpoint (see
// tanhSlice). For |x| <= 2⁻¹² the candidate is x itself: tanh x = x(1 - δ)
// with δ < x²/3 <= 2⁻²⁵·⁶, less than half a float32 ulp of x, so
// float32(tanh x) = x. The candidate is 1 - 2/(exp(2|x|)+1) with the
// sign of x; exp is 2^k times a degree-13 Taylor polynomial (Estrin) of the
// remainder r = 2|x| - k ln 2, |r| <= ln2/2. It returns the OR of all the
// masks, so that the caller can skip them when none is set.
TEXT ·tanhKernel(SB), NOSPLIT, $0-41
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ groups+16(FP), CX
	MOVQ flags+24(FP), BX
	MOVQ k+32(FP), R8
	XORQ R9, R9
	TESTQ CX, CX
	JZ   done

loop:
	VCVTPS2PD (SI), Y0              // x
	VANDPD    K_ABS(R8), Y0, Y1     // a = |x|
	VMOVUPD   K_LO(R8), Y2
	VCMPPD    $0x12, K_LO(R8), Y1, Y3 // a <= lo: tanh rounds to x itself
	VCMPPD    $0x11, Y1, Y2, Y2     // lo < a (ordered: false for NaN)
	VORPD     Y3, Y2, Y2            // in range...
	VCMPPD    $0x11, K_HI(R8), Y1, Y4 // a < hi
	VANDPD    Y4, Y2, Y2            // ... with the small ones
	VADDPD    Y1, Y1, Y4            // y = 2a
	VMULPD    K_LOG2E(R8), Y4, Y5
	VROUNDPD  $8, Y5, Y5            // k = round(y log2 e)
	VMULPD    K_LN2HI(R8), Y5, Y6
	VSUBPD    Y6, Y4, Y6            // y - k ln2hi
	VMULPD    K_LN2LO(R8), Y5, Y7
	VSUBPD    Y7, Y6, Y6            // r
	// p = e^r by Estrin's scheme on c_i = 1/i!, i <= 13: pairs q = c_2i +
	// c_2i+1 r, then pairs of pairs with r², r⁴, r⁸ (4 multiply-adds deep
	// instead of Horner's 13).
	VMULPD      Y6, Y6, Y4          // r2
	VMOVUPD     K_C+384(R8), Y7
	VFMADD213PD K_C+416(R8), Y6, Y7      // q0 = c1 r + c0
	VMOVUPD     K_C+320(R8), Y8
	VFMADD213PD K_C+352(R8), Y6, Y8      // q1
	VFMADD231PD Y8, Y4, Y7          // s0 = q1 r2 + q0
	VMOVUPD     K_C+256(R8), Y8
	VFMADD213PD K_C+288(R8), Y6, Y8      // q2
	VMOVUPD     K_C+192(R8), Y9
	VFMADD213PD K_C+224(R8), Y6, Y9      // q3
	VFMADD231PD Y9, Y4, Y8          // s1 = q3 r2 + q2
	VMOVUPD     K_C+128(R8), Y9
	VFMADD213PD K_C+160(R8), Y6, Y9      // q4
	VMOVUPD     K_C+64(R8), Y10
	VFMADD213PD K_C+96(R8), Y6, Y10    // q5
	VFMADD231PD Y10, Y4, Y9         // s2 = q5 r2 + q4
	VMOVUPD     K_C+0(R8), Y10
	VFMADD213PD K_C+32(R8), Y6, Y10    // s3 = q6 = c13 r + c12
	VMULPD      Y4, Y4, Y4          // r4
	VFMADD231PD Y8, Y4, Y7          // u0 = s1 r4 + s0
	VFMADD231PD Y10, Y4, Y9         // u1 = s3 r4 + s2
	VMULPD      Y4, Y4, Y4          // r8
	VFMADD231PD Y9, Y4, Y7          // p = u1 r8 + u0
	VMOVAPD     Y7, Y8
	VCVTPD2DQY Y5, X9
	VPMOVSXDQ X9, Y9
	VPSLLQ    $52, Y9, Y9
	VPADDQ    Y9, Y8, Y8            // e = p 2^k
	VMOVUPD   K_ONE(R8), Y10
	VADDPD    Y10, Y8, Y8           // e + 1
	VMOVUPD   K_TWO(R8), Y11
	VDIVPD    Y8, Y11, Y8           // 2/(e+1)
	VSUBPD    Y8, Y10, Y8           // t = 1 - 2/(e+1)
	VPAND     K_LOW29(R8), Y8, Y12
	VPSUBQ    K_HALF(R8), Y12, Y12  // distance from the float32 midpoint
	VMOVUPD   K_G(R8), Y13
	VPCMPGTQ  Y12, Y13, Y13         // d < G
	VPCMPGTQ  K_NEGG(R8), Y12, Y14  // d > -G
	VPAND     Y14, Y13, Y13         // near a midpoint
	VANDNPD   Y13, Y3, Y13          // (not for the small ones, which use x)
	VANDNPD   Y2, Y13, Y13          // usable: in range and not near
	VANDPD    K_SIGN(R8), Y0, Y15
	VORPD     Y15, Y8, Y8           // copysign(t, x)
	VBLENDVPD Y3, Y0, Y8, Y8        // x itself where a <= lo
	VCVTPD2PSY Y8, X8
	VMOVUPS   X8, (DI)
	VMOVMSKPD Y13, AX
	XORL      $15, AX               // flag the lanes that are not usable
	MOVB      AL, (BX)
	ORL       AX, R9
	ADDQ      $16, SI
	ADDQ      $16, DI
	INCQ      BX
	DECQ      CX
	JNZ       loop

done:
	MOVB R9, any+40(FP)
	VZEROUPPER
	RET

// func tanhGrad(dx, dy, y *float32, n int)
//
// dx[i] = dy[i] * (1 - y[i]*y[i]) for i < n, n a multiple of 8, with the
// roundings of the float32 expression in Go (no fused multiply-add).
TEXT ·tanhGrad(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   gdone
	MOVL $0x3f800000, AX // 1.0
	MOVL AX, X1
	VBROADCASTSS X1, Y1

g8:
	VMOVUPS (DX), Y0
	VMULPS  Y0, Y0, Y0 // y*y
	VSUBPS  Y0, Y1, Y0 // 1 - y*y
	VMULPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DX
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     g8

gdone:
	VZEROUPPER
	RET
