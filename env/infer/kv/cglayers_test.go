package kv

import "testing"

// TestCGLayerBits checks cgLayerBits' closed form against counting the
// layers one by one (cgLevels, cgCodeBits), and cachegenStoredBytes against
// the per-layer sum it replaced, for every model size up to 300 layers.
func TestCGLayerBits(t *testing.T) {
	for layers := 0; layers <= 300; layers++ {
		var keys, values [9]int
		for l := range layers {
			keys[cgCodeBits(cgLevels(l, layers, false))]++
			values[cgCodeBits(cgLevels(l, layers, true))]++
		}
		k, v := cgLayerBits(layers)
		if k != keys || v != values {
			t.Fatalf("%d layers: keys %v values %v, counted %v %v", layers, k, v, keys, values)
		}
		if layers == 0 {
			continue
		}
		a := Arch{Layers: layers, KVHeads: 8, HeadDim: 128}
		f := CacheGenCodec()
		var c consts
		p := newPair(&f, &a, &c, false)
		for _, tokens := range []int{0, 1, 9, 10, 11, 4096, 14001} {
			d, n := int64(a.HeadDim), int64(tokens)
			anchors := (n + int64(cgGroup) - 1) / int64(cgGroup)
			var perHead int64
			for l := range layers {
				kb, vb := cgCodeBits(cgLevels(l, layers, false)), cgCodeBits(cgLevels(l, layers, true))
				perHead += anchors*(d+metaBytes) + (n-anchors)*(d*kb/8+metaBytes)
				perHead += n * (d*vb/8 + metaBytes)
			}
			if got, want := p.cachegenStoredBytes(tokens), perHead*int64(a.KVHeads); got != want {
				t.Fatalf("%d layers, %d tokens: %d bytes, the per-layer sum %d", layers, tokens, got, want)
			}
		}
	}
}

// TestCGScheduled checks cgScheduled against cgLevels' own index
// arithmetic, layer by layer, for schedules of 1 to 7 entries.
func TestCGScheduled(t *testing.T) {
	for layers := 0; layers <= 300; layers++ {
		for n := 1; n <= 7; n++ {
			counts := make([]int, n)
			for l := 1; l < layers; l++ {
				counts[(l-1)*n/max(1, layers-1)]++
			}
			for i := range n {
				if got := cgScheduled(layers, n, i); got != counts[i] {
					t.Fatalf("%d layers, %d entries: entry %d takes %d layers, counted %d", layers, n, i, got, counts[i])
				}
			}
		}
	}
}
