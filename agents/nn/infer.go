package nn

import (
	"fmt"

	"gonum.org/v1/gonum/blas/gonum"
)

// Infer runs an MLP of Linear layers with Tanh or ReLU between them on one
// input at a time, the way a deployed policy decides: a matrix-vector
// product per layer with no batch machinery, several times faster than
// MLP.Forward on a single row (18 us against about 4 us for a 127-64-64-37
// network here). Its outputs equal MLP.Forward's to within float32
// rounding (the sums run in another order), so an argmax over them can
// differ from MLP.Forward's only on near ties. It reads the network's
// weights when called: changes to the MLP show. It keeps scratch space, so
// it is not safe for concurrent use.
type Infer struct {
	lin  []*Linear
	act  []byte // 't' tanh, 'r' relu, 0 none, after each Linear
	bufs [2][]float32
	in   []float32
}

// NewInfer returns the single-input runner of m, whose layers must be
// Linear, Tanh and ReLU only, each activation after a Linear.
func NewInfer(m *MLP) (*Infer, error) {
	f := &Infer{}
	for i, l := range m.Layers {
		switch l := l.(type) {
		case *Linear:
			f.lin, f.act = append(f.lin, l), append(f.act, 0)
		case *Tanh, *ReLU:
			if len(f.lin) == 0 || f.act[len(f.act)-1] != 0 {
				return nil, fmt.Errorf("nn: infer: layer %d: an activation not after a Linear", i)
			}
			if _, ok := l.(*Tanh); ok {
				f.act[len(f.act)-1] = 't'
			} else {
				f.act[len(f.act)-1] = 'r'
			}
		default:
			return nil, fmt.Errorf("nn: infer: layer %d: %T not supported", i, l)
		}
	}
	if len(f.lin) == 0 {
		return nil, fmt.Errorf("nn: infer: no Linear layer")
	}
	return f, nil
}

// Forward returns the network's output for x (length the first layer's
// In). The result is scratch space, valid until the next call.
func (f *Infer) Forward(x []float64) []float32 {
	if len(x) != f.lin[0].In {
		panic(fmt.Sprintf("nn: infer: input of %d values, want %d", len(x), f.lin[0].In))
	}
	f.in = f.in[:0]
	for _, v := range x {
		f.in = append(f.in, float32(v))
	}
	cur := f.in
	for k, l := range f.lin {
		out := f.bufs[k%2]
		if cap(out) < l.Out {
			out = make([]float32, l.Out)
		}
		out = out[:l.Out]
		w := l.W.Value
		for o := range l.Out {
			row := w[o*l.In : (o+1)*l.In]
			out[o] = l.B.Value[o] + gonum.Implementation{}.Sdot(l.In, row, 1, cur, 1)
		}
		switch f.act[k] {
		case 't':
			for i, v := range out {
				out[i] = tanh32(v)
			}
		case 'r':
			for i, v := range out {
				out[i] = max(v, 0)
			}
		}
		f.bufs[k%2] = out
		cur = out
	}
	return cur
}
