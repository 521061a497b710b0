package llm

import "io"

// Columns of Vidur's processed request-length traces (microsoft/vidur,
// data/processed_traces/*.csv: num_prefill_tokens, num_decode_tokens,
// num_total_tokens, pd_ratio; the last two are derived and ignored).
const (
	VidurPrompt = "num_prefill_tokens"
	VidurOutput = "num_decode_tokens"
)

// Length is a request's prompt and output tokens, without an arrival.
type Length struct {
	Prompt, Output int // prompt (prefill) and output (decode) tokens
}

// Lengths is a table of request lengths read from one source, in the
// source's order.
type Lengths struct {
	// Name names the table: the source's base name for a file.
	Name string
	// Rows are the lengths, in the source's order.
	Rows []Length
	// Skips counts the rows left out (Options.SkipBad).
	Skips
}

// DecodeVidur reads a table of request lengths in Vidur's form: a CSV
// with the columns num_prefill_tokens (the prompt) and num_decode_tokens
// (the output); others are ignored. Rows keep the file's order. A row that
// does not parse or whose tokens are outside 1..MaxTokens is a
// *ParseError naming o.Source, the line, the column and the field, or is
// skipped and counted with o.SkipBad. Rows with a one-token prompt (72 of
// the arXiv-summarization file's 28,257) are valid requests and kept;
// Synth.MinPrompt drops them. Gzip data is decompressed.
func DecodeVidur(data []byte, o Options) (*Lengths, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return nil, err
	}
	t, err := openTable(data, o.Source, VidurPrompt, VidurOutput)
	if err != nil {
		return nil, err
	}
	ls := &Lengths{Rows: make([]Length, 0, min(t.rows, 1<<20))}
	cPrompt, cOutput := t.column(VidurPrompt), t.column(VidurOutput)
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if err := o.bad(&ls.Skips, line, 0, "row", ReasonMalformed, err); err != nil {
				return nil, err
			}
			continue
		}
		var l Length
		if l.Prompt, err = tokens(t, rec, cPrompt, &o, &ls.Skips); err != nil || l.Prompt == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if l.Output, err = tokens(t, rec, cOutput, &o, &ls.Skips); err != nil || l.Output == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		ls.Rows = append(ls.Rows, l)
	}
	if len(ls.Rows) == 0 {
		return nil, &ParseError{File: o.Source, Field: "file", Err: ErrEmpty}
	}
	return ls, nil
}
