// Package mmlog is the multimodal serving logs of the policy server
// (issue 35): every Scale answer (a deployment's pool sizes for the next
// period, serve.Core.Scale) and every RouteMM answer (where a multimodal
// request's images and text run, serve.Core.RouteMM) as one line of JSON,
// with what it was decided on and who answered: the scale log
// (ScalesFile, scales.jsonl) and the multimodal route log (RoutesFile,
// mmroutes.jsonl), beside the LLM route log (serve/routelog) in a
// server's log directory. docs/format/mm-log.md specifies both.
//
// Encoding is separate from I/O: EncodeScale, DecodeScale, EncodeRoute
// and DecodeRoute are pure; ReadScales and ReadRoutes read a file (a bad
// line is an error naming its line number), and serve/routelog's Writer
// appends the encoded lines (Writer.AppendLine).
//
// # Usage
//
//	sw, _ := routelog.Create(filepath.Join(dir, mmlog.ScalesFile))
//	rw, _ := routelog.Create(filepath.Join(dir, mmlog.RoutesFile))
//	sink := serve.NewLogSink(decisions).WithMM(sw, rw) // Close closes both
//	core, _ := serve.NewCore(serve.WithSink(sink), serve.WithMM(cfg))
//	... // serve, then close the sink
//
//	scales, partial, err := mmlog.ReadScalesFile(filepath.Join(dir, mmlog.ScalesFile))
//	for _, s := range scales {
//		fmt.Println(s.Period, s.Sizes, s.Policy)
//	}
package mmlog
