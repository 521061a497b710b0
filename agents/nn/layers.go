package nn

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Param is one trainable tensor: its values and the gradient accumulated by
// Backward, both flattened row-major, with the tensor shape (for a Linear
// weight, [out, in], as in PyTorch).
type Param struct {
	// Name identifies the tensor in a weight file, e.g. "0.weight".
	Name string
	// Value holds the parameter values.
	Value []float32
	// Grad holds the accumulated gradient; len(Grad) == len(Value).
	Grad []float32
	// Shape is the tensor shape; the product of its entries is len(Value).
	Shape []int
}

// NewParam returns a zeroed parameter with the given name and shape.
func NewParam(name string, shape ...int) *Param {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic("nn: negative parameter dimension")
		}
		n *= d
	}
	return &Param{Name: name, Value: make([]float32, n), Grad: make([]float32, n), Shape: append([]int(nil), shape...)}
}

// ZeroGrad sets the gradient of p to zero.
func (p *Param) ZeroGrad() { clear(p.Grad) }

// Layer is a differentiable map on a batch of rows. Forward caches what
// Backward needs; Backward takes the gradient of the loss with respect to the
// last Forward's output, accumulates parameter gradients (if any) and returns
// the gradient with respect to that Forward's input.
//
// The Mats a Layer returns are owned by it and are overwritten by its next
// call; the input passed to Forward must not be modified before Backward.
type Layer interface {
	Forward(x Mat) Mat
	Backward(dy Mat) Mat
}

// Linear is a fully connected layer y = x Wᵀ + b, as torch.nn.Linear, with W of
// shape [Out, In] and b of shape [Out]. A new Linear has zero weights; see
// Orthogonal and TorchDefaultInit.
type Linear struct {
	// In and Out are the input and output widths.
	In, Out int
	// W is the weight, shape [Out, In]; W.Grad is dL/dW.
	W *Param
	// B is the bias, shape [Out]; B.Grad is dL/db.
	B *Param

	x     Mat       // cached input of the last Forward
	y, dx Mat       // reused output buffers
	ones  []float32 // ones for the bias gradient's product
}

// NewLinear returns a zero-initialised in -> out layer whose parameters are
// named "weight" and "bias" (MLP renames them "<index>.weight" and so on).
// A width below 1 is a programmer error and panics; check widths that come
// from a config or a file with CheckSizes first.
func NewLinear(in, out int) *Linear {
	if in <= 0 || out <= 0 {
		panic(fmt.Sprintf("nn: NewLinear(%d, %d): widths must be positive", in, out))
	}
	return &Linear{In: in, Out: out, W: NewParam("weight", out, in), B: NewParam("bias", out)}
}

// Forward returns x Wᵀ + b for a batch x of shape [n, In].
func (l *Linear) Forward(x Mat) Mat {
	if x.Cols != l.In {
		panic(fmt.Sprintf("nn: Linear input has %d columns, want %d", x.Cols, l.In))
	}
	l.x = x
	l.y = resize(l.y, x.Rows, l.Out)
	for i := 0; i < x.Rows; i++ {
		copy(l.y.Row(i), l.B.Value)
	}
	gemm(false, true, 1, x, l.weight(), 1, l.y)
	return l.y
}

// Backward accumulates dL/dW += dyᵀ x and dL/db += Σ_rows dy and returns
// dL/dx = dy W.
func (l *Linear) Backward(dy Mat) Mat {
	l.accumulate(dy)
	l.dx = resize(l.dx, dy.Rows, l.In)
	gemm(false, false, 1, dy, l.weight(), 0, l.dx)
	return l.dx
}

// accumulate is Backward without the input gradient.
func (l *Linear) accumulate(dy Mat) {
	if dy.Rows != l.x.Rows || dy.Cols != l.Out {
		panic(fmt.Sprintf("nn: Linear gradient is %dx%d, want %dx%d", dy.Rows, dy.Cols, l.x.Rows, l.Out))
	}
	gemm(true, false, 1, dy, l.x, 1, Mat{Rows: l.Out, Cols: l.In, Data: l.W.Grad})
	db := l.B.Grad
	if haveKernels && gonumBLAS && dy.Rows > 0 {
		// db += 1ᵀ dy on the kernels: each db[j] gets 1·g = g added row by
		// row, exactly the loop below.
		if len(l.ones) < dy.Rows {
			l.ones = make([]float32, dy.Rows)
			for i := range l.ones {
				l.ones[i] = 1
			}
		}
		fastGemm(true, 1, l.Out, dy.Rows, l.ones, 1, dy.Data, l.Out, db, l.Out)
		return
	}
	for i := 0; i < dy.Rows; i++ {
		for j, g := range dy.Row(i) {
			db[j] += g
		}
	}
}

func (l *Linear) weight() Mat { return Mat{Rows: l.Out, Cols: l.In, Data: l.W.Value} }

// Params returns the weight and the bias.
func (l *Linear) Params() []*Param { return []*Param{l.W, l.B} }

// Tanh is the elementwise hyperbolic tangent.
type Tanh struct {
	y, dx Mat
	flags []uint8 // tanhSlice's scratch
}

// Forward returns tanh(x) elementwise.
func (t *Tanh) Forward(x Mat) Mat {
	t.y = resize(t.y, x.Rows, x.Cols)
	t.flags = tanhSlice(t.y.Data, x.Data, t.flags) // float32(math.Tanh(float64(v))), bit for bit
	return t.y
}

// Backward returns dy ⊙ (1 - tanh(x)²).
func (t *Tanh) Backward(dy Mat) Mat {
	if dy.Rows != t.y.Rows || dy.Cols != t.y.Cols {
		panic("nn: Tanh gradient shape mismatch")
	}
	t.dx = resize(t.dx, dy.Rows, dy.Cols)
	n := 0
	if haveKernels && len(dy.Data) >= 8 {
		n = len(dy.Data) &^ 7
		tanhGrad(&t.dx.Data[0], &dy.Data[0], &t.y.Data[0], n)
	}
	for i := n; i < len(dy.Data); i++ {
		y := t.y.Data[i]
		t.dx.Data[i] = dy.Data[i] * float32(1-float32(y*y))
	}
	return t.dx
}

// ReLU is the elementwise max(x, 0). Its derivative at 0 is taken as 0, as in
// PyTorch.
type ReLU struct{ y, dx Mat }

// Forward returns max(x, 0) elementwise.
func (r *ReLU) Forward(x Mat) Mat {
	r.y = resize(r.y, x.Rows, x.Cols)
	for i, v := range x.Data {
		r.y.Data[i] = max(v, 0)
	}
	return r.y
}

// Backward returns dy where the input was positive and 0 elsewhere.
func (r *ReLU) Backward(dy Mat) Mat {
	if dy.Rows != r.y.Rows || dy.Cols != r.y.Cols {
		panic("nn: ReLU gradient shape mismatch")
	}
	r.dx = resize(r.dx, dy.Rows, dy.Cols)
	for i, g := range dy.Data {
		if r.y.Data[i] > 0 {
			r.dx.Data[i] = g
		} else {
			r.dx.Data[i] = 0
		}
	}
	return r.dx
}

// MLP is a sequence of layers applied in order, like torch.nn.Sequential.
type MLP struct {
	// Layers are applied first to last.
	Layers []Layer
	params []*Param
}

// NewMLP chains layers. Parameters of a layer that has a Params method are
// renamed "<index>.<name>" (index in layers), so a Linear at index 2 has
// "2.weight" and "2.bias", matching a PyTorch nn.Sequential state_dict.
func NewMLP(layers ...Layer) *MLP {
	m := &MLP{Layers: layers}
	for i, l := range layers {
		if pl, ok := l.(interface{ Params() []*Param }); ok {
			for _, p := range pl.Params() {
				p.Name = strconv.Itoa(i) + "." + p.Name
				m.params = append(m.params, p)
			}
		}
	}
	return m
}

// NewOrthogonalMLP builds Linear layers of the given widths (sizes[0] inputs,
// sizes[len-1] outputs) with a new activation from act after every hidden
// layer, initialised as CleanRL's layer_init: orthogonal weights with gain
// hiddenGain (outputGain for the last layer) and zero biases. For CleanRL's
// PPO actor: NewOrthogonalMLP([]int{obs, 64, 64, actions}, NewTanh, math.Sqrt2, 0.01, src).
func NewOrthogonalMLP(sizes []int, act func() Layer, hiddenGain, outputGain float64, src rand.Source) *MLP {
	m := NewStack(sizes, act)
	ls := m.Linears()
	for i, l := range ls {
		gain := hiddenGain
		if i == len(ls)-1 {
			gain = outputGain
		}
		Orthogonal(l.W, gain, src)
		Constant(l.B, 0)
	}
	return m
}

// NewStack returns a zero-initialised MLP of Linear layers of the given
// widths (sizes[0] inputs, sizes[len-1] outputs) with a new activation from
// act after every hidden layer: the shape every Drover network has. It
// panics on fewer than two sizes or a width below 1 (a programmer error)
// and allocates whatever it is asked, so check sizes that come from a
// config or a file with CheckSizes (or CheckHidden) first.
func NewStack(sizes []int, act func() Layer) *MLP {
	if len(sizes) < 2 {
		panic("nn: an MLP needs at least two sizes")
	}
	var layers []Layer
	for i := 0; i+1 < len(sizes); i++ {
		layers = append(layers, NewLinear(sizes[i], sizes[i+1]))
		if i+2 < len(sizes) {
			layers = append(layers, act())
		}
	}
	return NewMLP(layers...)
}

// Linears returns the MLP's Linear layers, first to last.
func (m *MLP) Linears() []*Linear {
	var ls []*Linear
	for _, l := range m.Layers {
		if lin, ok := l.(*Linear); ok {
			ls = append(ls, lin)
		}
	}
	return ls
}

// NewTanh returns a Tanh layer (for use as NewOrthogonalMLP's act).
func NewTanh() Layer { return &Tanh{} }

// NewReLU returns a ReLU layer (for use as NewOrthogonalMLP's act).
func NewReLU() Layer { return &ReLU{} }

// Forward applies the layers in order.
func (m *MLP) Forward(x Mat) Mat {
	for _, l := range m.Layers {
		x = l.Forward(x)
	}
	return x
}

// Backward propagates dy back through the layers, accumulating parameter
// gradients, and returns the gradient with respect to the input.
func (m *MLP) Backward(dy Mat) Mat {
	for i := len(m.Layers) - 1; i >= 0; i-- {
		dy = m.Layers[i].Backward(dy)
	}
	return dy
}

// Accumulate is Backward without the gradient with respect to the network
// input, which a training step does not need; it skips the first layer's
// input-gradient product when that layer is a Linear.
func (m *MLP) Accumulate(dy Mat) {
	for i := len(m.Layers) - 1; i >= 0; i-- {
		if l, ok := m.Layers[i].(*Linear); ok && i == 0 {
			l.accumulate(dy)
			return
		}
		dy = m.Layers[i].Backward(dy)
	}
}

// Params returns the trainable parameters in layer order.
func (m *MLP) Params() []*Param { return m.params[:len(m.params):len(m.params)] }

// ZeroGrad zeroes the gradients of all parameters.
func (m *MLP) ZeroGrad() {
	for _, p := range m.params {
		p.ZeroGrad()
	}
}
