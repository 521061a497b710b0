package policies

// MostFree is env.PackMostFree over a max tree, for a policy that packs many
// jobs into one set of free GPUs: Reset takes O(nodes), then each Pack
// O(k log nodes) for the k nodes it fills, where env.PackMostFree scans every
// node for each node it fills. Its choices, and what it leaves in the free
// slice, are env.PackMostFree's (TestMostFreeMatchesPack). The zero value is
// ready for Reset.
type MostFree struct {
	free  []int
	tree  []int32 // tree[i]: the best leaf under node i (-1: none); leaves at size+k
	size  int
	total int
}

// Reset makes m pack into free (which Pack decrements, as env.PackMostFree
// does; m keeps it until the next Reset).
func (m *MostFree) Reset(free []int) {
	m.free, m.total = free, 0
	for _, f := range free {
		m.total += f
	}
	m.size = 1
	for m.size < len(free) {
		m.size *= 2
	}
	if cap(m.tree) < 2*m.size {
		m.tree = make([]int32, 2*m.size)
	}
	m.tree = m.tree[:2*m.size]
	for k := range m.size {
		m.tree[m.size+k] = -1
		if k < len(free) {
			m.tree[m.size+k] = int32(k)
		}
	}
	for i := m.size - 1; i >= 1; i-- {
		m.tree[i] = m.better(m.tree[2*i], m.tree[2*i+1])
	}
}

// better returns whichever of leaves a and b env.PackMostFree takes first: the
// most free GPUs, the lower index among equals (a < b: a is left of b).
func (m *MostFree) better(a, b int32) int32 {
	if b < 0 || a >= 0 && m.free[a] >= m.free[b] {
		return a
	}
	return b
}

// Pack is env.PackMostFree(free, n) on the free slice of the last Reset.
func (m *MostFree) Pack(n int) []int {
	if n > m.total {
		return nil
	}
	alloc := make([]int, 0, n)
	for len(alloc) < n {
		best := int(m.tree[1])
		k := min(m.free[best], n-len(alloc))
		for range k {
			alloc = append(alloc, best)
		}
		m.free[best] -= k
		m.total -= k
		for i := (m.size + best) / 2; i >= 1; i /= 2 {
			m.tree[i] = m.better(m.tree[2*i], m.tree[2*i+1])
		}
	}
	return alloc
}
