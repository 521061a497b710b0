package mm

import (
	"fmt"
	"math"
)

// Arch is how a multimodal model consumes its image tokens.
type Arch uint8

// The two architectures ModServe studies.
const (
	// CrossAttention models (Llama-3.2-Vision) keep image tokens out of the
	// text sequence: the language model's self-attention layers run over
	// the text tokens only, and dedicated cross-attention layers read the
	// image tokens' keys and values.
	CrossAttention Arch = iota
	// DecoderOnly models (InternVL, LLaVA-OneVision) put the image tokens
	// into the prompt: prefill runs over text and image tokens alike, and
	// the KV cache holds both.
	DecoderOnly
)

func (a Arch) String() string {
	switch a {
	case CrossAttention:
		return "cross-attention"
	case DecoderOnly:
		return "decoder-only"
	}
	return fmt.Sprintf("Arch(%d)", uint8(a))
}

// Model is a large multimodal model as the simulator needs it: its vision
// encoder and its language model, from the public model cards (each
// preset names its source).
type Model struct {
	// Name is the model's name ("llama-3.2-11b-vision").
	Name string
	// Arch says whether image tokens enter the prompt.
	Arch Arch
	// ImageTokens is the tokens one 896x896 image becomes (the language
	// model's input, after the encoder and projector).
	ImageTokens int
	// MaxContext is the language model's context window (tokens): a
	// request's prompt (with its image tokens, for DecoderOnly) is cut to
	// it, and its images to what fits (Config.MaxImages).
	MaxContext int

	// Layers, Hidden, Heads and KVHeads are the language model's
	// self-attention decoder layers, hidden size, attention heads and
	// key-value heads (grouped-query attention); HeadDim is Hidden/Heads.
	Layers, Hidden, Heads, KVHeads int
	// CrossLayers is the cross-attention layers of a CrossAttention model
	// (0 for DecoderOnly): their KV cache holds the image tokens.
	CrossLayers int
	// TextParams is the language model's parameters that every token runs
	// through (all but the input embedding): prefill and decode cost
	// 2 x TextParams FLOPs a token.
	TextParams float64
	// WeightBytes is all weights (language model, vision encoder,
	// projector), 16-bit.
	WeightBytes float64

	// EncoderParams is the vision encoder's parameters; EncoderTokens the
	// patch tokens it runs over for one 896x896 image (all tiles);
	// EncoderLayers, EncoderHidden and EncoderTileTokens size its
	// attention (each group of EncoderTileTokens attends within itself).
	EncoderParams                               float64
	EncoderTokens, EncoderLayers, EncoderHidden int
	EncoderTileTokens                           int
	EncoderWeightBytes                          float64
	// ProjectorFLOPsPerToken is the FLOPs of the projector (vision
	// features to the language model's width) for one image token.
	ProjectorFLOPsPerToken float64

	// Tiling is how an image of a given size is cut into tiles (Tiles);
	// FixedTiling (the zero value) makes every image an 896x896 one. The
	// other fields below are used only when it is not FixedTiling.
	Tiling Tiling
	// TileSide is a tile's side (pixels); MaxTiles the most tiles an
	// image is cut into (without the thumbnail).
	TileSide, MaxTiles int
	// TileTokens is the language model's tokens a tile becomes;
	// PatchesPerTile the encoder's patch tokens of a tile.
	TileTokens, PatchesPerTile int
	// CrossTileAttention reports an encoder whose attention runs over
	// every tile of an image at once (Llama-3.2-Vision's), not within
	// each tile.
	CrossTileAttention bool
	// PadTiles reports an encoder that always runs over MaxTiles tiles,
	// those an image does not fill zero-padded: transformers'
	// MllamaImageProcessor (which vLLM uses) pads every Llama-3.2-Vision
	// image to max_image_tiles, so its encoder work does not depend on
	// the image's size, while its tokens in the language model (the
	// cross-attention states of its real tiles) do.
	PadTiles bool
	// Source says where the figures come from.
	Source string
}

// HeadDim is the attention head dimension.
func (m Model) HeadDim() int { return m.Hidden / m.Heads }

// KVBytesPerToken is the KV cache of one text token, 16-bit:
// 2 (K and V) x Layers x KVHeads x HeadDim x 2 bytes.
func (m Model) KVBytesPerToken() float64 {
	return float64(2 * m.Layers * m.KVHeads * m.HeadDim() * 2)
}

// KVBytesPerImageToken is the KV cache one image token holds: a text
// token's for DecoderOnly, the cross-attention layers' for CrossAttention.
func (m Model) KVBytesPerImageToken() float64 {
	if m.Arch == DecoderOnly {
		return m.KVBytesPerToken()
	}
	return float64(2 * m.CrossLayers * m.KVHeads * m.HeadDim() * 2)
}

// EmbeddingBytes is what one image's tokens weigh on the wire from an
// image instance to a text instance: ImageTokens x Hidden x 2 bytes (the
// projected embeddings, 16-bit).
func (m Model) EmbeddingBytes() float64 {
	return float64(m.ImageTokens) * float64(m.Hidden) * 2
}

// EncoderFLOPs is the vision encoder's work for one image: 2 x params a
// patch token, plus attention within each tile (4 x tile tokens^2 x hidden
// a layer), plus the projector.
func (m Model) EncoderFLOPs() float64 {
	tiles := float64(m.EncoderTokens) / float64(m.EncoderTileTokens)
	attn := 4 * float64(m.EncoderTileTokens) * float64(m.EncoderTileTokens) * float64(m.EncoderHidden) * float64(m.EncoderLayers) * tiles
	return 2*m.EncoderParams*float64(m.EncoderTokens) + attn + m.ProjectorFLOPsPerToken*float64(m.ImageTokens)
}

// ImageTokensTiles is the language model's tokens of an image of k
// tiles (Tiles).
func (m Model) ImageTokensTiles(k int) int { return k * m.TileTokens }

// EncoderFLOPsTiles is the vision encoder's work for one image of k tiles
// (Tiles), as EncoderFLOPs counts it for an 896x896 image.
func (m Model) EncoderFLOPsTiles(k int) float64 {
	if m.PadTiles {
		k = m.MaxTiles
	}
	tokens := k * m.PatchesPerTile
	group := m.PatchesPerTile
	if m.CrossTileAttention {
		group = tokens
	}
	tiles := float64(tokens) / float64(group)
	attn := 4 * float64(group) * float64(group) * float64(m.EncoderHidden) * float64(m.EncoderLayers) * tiles
	return 2*m.EncoderParams*float64(tokens) + attn + m.ProjectorFLOPsPerToken*float64(m.ImageTokensTiles(k))
}

// Llama32_11BVision is meta-llama/Llama-3.2-11B-Vision-Instruct
// (config.json on its model card): a cross-attention model whose language
// model has 40 layers of hidden 4096, 32 heads, 8 KV heads, 8 of them
// cross-attention layers (32 self-attention), intermediate 14336, 128K
// context; 10.67B parameters, 0.89B of them the vision encoder (a ViT-H/14
// of 32 local and 8 global layers, hidden 1280, on up to 4 tiles of
// 560x560: 1,601 tokens a tile). One 896x896 image takes 4 tiles: 4 x
// 1,601 = 6,404 tokens, the figure issue 35 quotes. Text parameters
// through which every token runs: 10.67B - 0.89B - the 0.53B input
// embedding = 9.25B.
var Llama32_11BVision = Model{
	Name: "llama-3.2-11b-vision", Arch: CrossAttention, ImageTokens: 6404, MaxContext: 131072,
	Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, CrossLayers: 8,
	TextParams: 9.25e9, WeightBytes: 2 * 10.67e9,
	EncoderParams: 0.79e9, EncoderTokens: 6404, EncoderLayers: 40, EncoderHidden: 1280, EncoderTileTokens: 6404,
	EncoderWeightBytes: 2 * 0.89e9,
	// The projector maps the 7,680-wide vision output to 4,096.
	ProjectorFLOPsPerToken: 2 * 7680 * 4096,
	Tiling:                 CanvasTiling, TileSide: 560, MaxTiles: 4, TileTokens: 1601, PatchesPerTile: 1601, CrossTileAttention: true, PadTiles: true,
	Source: "model card config.json (meta-llama/Llama-3.2-11B-Vision-Instruct); tiling: transformers' MllamaImageProcessor",
}

// InternVL25_26B is OpenGVLab/InternVL2_5-26B (its model card): a
// decoder-only model, InternViT-6B-448px-V2_5 (5.9B parameters, 45
// layers, hidden 3200; 1,025 tokens a 448x448 tile) with a pixel-shuffle
// MLP projector (256 tokens a tile) before internlm2_5-20b-chat (48
// layers, hidden 6144, 48 heads, 8 KV heads, 19.86B parameters, 32K
// context). One 896x896 image is 4 tiles and a thumbnail: 5 x 256 =
// 1,280 tokens, the figure issue 35 quotes. Text parameters through which
// every token runs: 19.86B - the 0.57B input embedding = 19.3B.
var InternVL25_26B = Model{
	Name: "internvl-2.5-26b", Arch: DecoderOnly, ImageTokens: 1280, MaxContext: 32768,
	Layers: 48, Hidden: 6144, Heads: 48, KVHeads: 8,
	TextParams: 19.3e9, WeightBytes: 2 * 25.5e9,
	EncoderParams: 5.9e9, EncoderTokens: 5 * 1025, EncoderLayers: 45, EncoderHidden: 3200, EncoderTileTokens: 1025,
	EncoderWeightBytes: 2 * 5.9e9,
	// The projector: an MLP from 4 x 3200 (pixel shuffle) to 6144, then
	// 6144 to 6144.
	ProjectorFLOPsPerToken: 2 * (4*3200*6144 + 6144*6144),
	Tiling:                 DynamicTiling, TileSide: 448, MaxTiles: 12, TileTokens: 256, PatchesPerTile: 1025,
	Source: "model card (OpenGVLab/InternVL2_5-26B, its dynamic_preprocess; internlm/internlm2_5-20b-chat config.json)",
}

// LLaVAOneVision7B is lmms-lab/llava-onevision-qwen2-7b-ov: a decoder-only
// model whose SigLIP-so400m encoder (0.4B, 27 layers, hidden 1152) makes
// 729 tokens of each 384x384 crop; anyres-max-9 gives an 896x896 image 9
// crops and the base view: 10 x 729 = 7,290 tokens, the third figure of
// issue 35. Its language model is Qwen2-7B (28 layers, hidden 3584, 28
// heads, 4 KV heads, 32K context). The paper's static evaluation does not
// use it; it is here for the token count, and every image is 896x896 for
// it (FixedTiling: its anyres-max-9 grids and unpadding are not modelled).
var LLaVAOneVision7B = Model{
	Name: "llava-onevision-7b", Arch: DecoderOnly, ImageTokens: 7290, MaxContext: 32768,
	Layers: 28, Hidden: 3584, Heads: 28, KVHeads: 4,
	TextParams: 7.07e9, WeightBytes: 2 * 8.03e9,
	EncoderParams: 0.4e9, EncoderTokens: 7290, EncoderLayers: 27, EncoderHidden: 1152, EncoderTileTokens: 729,
	EncoderWeightBytes:     2 * 0.4e9,
	ProjectorFLOPsPerToken: 2 * (1152*3584 + 3584*3584),
	Source:                 "model card (lmms-lab/llava-onevision-qwen2-7b-ov)",
}

// Models are the presets, by name.
var Models = []Model{Llama32_11BVision, InternVL25_26B, LLaVAOneVision7B}

// LookupModel returns the preset named name.
func LookupModel(name string) (Model, error) {
	for _, m := range Models {
		if m.Name == name {
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("%w: unknown model %q", ErrBadConfig, name)
}

func (m Model) validate() error {
	bad := func(x float64) bool { return !(x > 0) || math.IsInf(x, 0) }
	switch {
	case m.Name == "":
		return fmt.Errorf("%w: model without a name", ErrBadConfig)
	case m.Arch > DecoderOnly:
		return fmt.Errorf("%w: model %s: arch %v", ErrBadConfig, m.Name, m.Arch)
	case m.ImageTokens < 1 || m.MaxContext < 2 || m.Layers < 1 || m.Hidden < 1 || m.Heads < 1 || m.KVHeads < 1 || m.Hidden%m.Heads != 0 || m.CrossLayers < 0:
		return fmt.Errorf("%w: model %s: shape %+v", ErrBadConfig, m.Name, m)
	case m.Arch == CrossAttention && m.CrossLayers < 1:
		return fmt.Errorf("%w: model %s: cross-attention model without cross-attention layers", ErrBadConfig, m.Name)
	case bad(m.TextParams) || bad(m.WeightBytes) || bad(m.EncoderParams) || bad(m.EncoderWeightBytes) || m.ProjectorFLOPsPerToken < 0:
		return fmt.Errorf("%w: model %s: sizes %+v", ErrBadConfig, m.Name, m)
	case m.EncoderTokens < 1 || m.EncoderLayers < 1 || m.EncoderHidden < 1 || m.EncoderTileTokens < 1 || m.EncoderTileTokens > m.EncoderTokens:
		return fmt.Errorf("%w: model %s: encoder %+v", ErrBadConfig, m.Name, m)
	case m.Tiling > DynamicTiling:
		return fmt.Errorf("%w: model %s: tiling %d", ErrBadConfig, m.Name, m.Tiling)
	case m.Tiling != FixedTiling && (m.TileSide < 1 || m.MaxTiles < 1 || m.MaxTiles > 64 || m.TileTokens < 1 || m.PatchesPerTile < 1):
		return fmt.Errorf("%w: model %s: tiles %+v", ErrBadConfig, m.Name, m)
	}
	return nil
}
