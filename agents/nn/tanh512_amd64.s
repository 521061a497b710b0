//go:build amd64 && !purego && !netlib

#include "textflag.h"

// Constant rows of tanhConsts (tanh_amd64.go): as in tanh_amd64.s, read
// here as broadcasts of their first element.
#define K_ABS    0
#define K_SIGN   32
#define K_HI     96
#define K_LOG2E  128
#define K_LN2HI  160
#define K_LN2LO  192
#define K_C      224
#define K_ONE    672
#define K_TWO    704
#define K_LOW29  736
#define K_HALF   768
#define K_G      800
#define K_NEGG   832
#define K_LO     64

// func tanhKernel512(dst, src *float32, pairs int, flags *uint8, k *[tanhConstRows][4]uint64) (any uint8)
//
// tanhKernel512 is tanhKernel (tanh_amd64.s) for 8 values at a time on
// AVX-512 (F and DQ): the same float64 computation, lane for lane, so the
// same candidates and flags; each pair of groups of 4 gets its two flag
// bytes.
TEXT ·tanhKernel512(SB), NOSPLIT, $0-41
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  pairs+16(FP), CX
	MOVQ  flags+24(FP), BX
	MOVQ  k+32(FP), R8
	XORQ  R9, R9
	TESTQ CX, CX
	JZ    done512

loop512:
	VCVTPS2PD       (SI), Z0                   // x
	VPANDQ.BCST     K_ABS(R8), Z0, Z1          // a = |x|
	VCMPPD.BCST     $0x12, K_LO(R8), Z1, K2    // a <= lo: the result is x
	VCMPPD.BCST     $0x11, K_HI(R8), Z1, K4    // a < hi (false for NaN)
	VADDPD          Z1, Z1, Z4                 // y = 2a
	VMULPD.BCST     K_LOG2E(R8), Z4, Z5
	VRNDSCALEPD     $8, Z5, Z5                 // k = round(y log2 e)
	VMULPD.BCST     K_LN2HI(R8), Z5, Z6
	VSUBPD          Z6, Z4, Z6
	VMULPD.BCST     K_LN2LO(R8), Z5, Z7
	VSUBPD          Z7, Z6, Z6                 // r
	VMULPD          Z6, Z6, Z4                 // r2
	VBROADCASTSD    K_C+384(R8), Z7            // c1
	VFMADD213PD.BCST K_C+416(R8), Z6, Z7       // q0 = c1 r + c0
	VBROADCASTSD    K_C+320(R8), Z8            // c3
	VFMADD213PD.BCST K_C+352(R8), Z6, Z8       // q1
	VFMADD231PD     Z8, Z4, Z7                 // s0 = q1 r2 + q0
	VBROADCASTSD    K_C+256(R8), Z8            // c5
	VFMADD213PD.BCST K_C+288(R8), Z6, Z8       // q2
	VBROADCASTSD    K_C+192(R8), Z9            // c7
	VFMADD213PD.BCST K_C+224(R8), Z6, Z9       // q3
	VFMADD231PD     Z9, Z4, Z8                 // s1
	VBROADCASTSD    K_C+128(R8), Z9            // c9
	VFMADD213PD.BCST K_C+160(R8), Z6, Z9       // q4
	VBROADCASTSD    K_C+64(R8), Z10            // c11
	VFMADD213PD.BCST K_C+96(R8), Z6, Z10       // q5
	VFMADD231PD     Z10, Z4, Z9                // s2
	VBROADCASTSD    K_C+0(R8), Z10             // c13
	VFMADD213PD.BCST K_C+32(R8), Z6, Z10       // s3 = q6
	VMULPD          Z4, Z4, Z4                 // r4
	VFMADD231PD     Z8, Z4, Z7                 // u0 = s1 r4 + s0
	VFMADD231PD     Z10, Z4, Z9                // u1 = s3 r4 + s2
	VMULPD          Z4, Z4, Z4                 // r8
	VFMADD231PD     Z9, Z4, Z7                 // p = u1 r8 + u0
	VCVTPD2QQ       Z5, Z9
	VPSLLQ          $52, Z9, Z9
	VPADDQ          Z9, Z7, Z8                 // e = p 2^k
	VBROADCASTSD    K_ONE(R8), Z10
	VADDPD          Z10, Z8, Z8                // e + 1
	VBROADCASTSD    K_TWO(R8), Z11
	VDIVPD          Z8, Z11, Z8                // 2/(e+1)
	VSUBPD          Z8, Z10, Z8                // t = 1 - 2/(e+1)
	VPANDQ.BCST     K_LOW29(R8), Z8, Z12
	VPSUBQ.BCST     K_HALF(R8), Z12, Z12       // distance from the float32 midpoint
	VPCMPQ.BCST     $1, K_G(R8), Z12, K5       // d < G
	VPCMPQ.BCST     $6, K_NEGG(R8), Z12, K6    // d > -G
	KANDW           K6, K5, K5                 // near a midpoint
	KANDNW          K5, K2, K5                 // (not for the small ones)
	KANDNW          K4, K5, K7                 // usable: in range, not near
	VPANDQ.BCST     K_SIGN(R8), Z0, Z15
	VPORQ           Z15, Z8, Z8                // copysign(t, x)
	VMOVAPD         Z0, K2, Z8                 // x itself where a <= lo
	VCVTPD2PS       Z8, Y8
	VMOVUPS         Y8, (DI)
	KMOVW           K7, AX
	NOTL            AX
	ANDL            $0xFF, AX                  // the lanes that are not usable
	ORL             AX, R9
	MOVL            AX, DX
	ANDL            $15, AX
	MOVB            AL, (BX)
	SHRL            $4, DX
	MOVB            DX, 1(BX)
	ADDQ            $32, SI
	ADDQ            $32, DI
	ADDQ            $2, BX
	DECQ            CX
	JNZ             loop512

done512:
	MOVB R9, any+40(FP)
	VZEROUPPER
	RET
