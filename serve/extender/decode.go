package extender

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// decodeArgs reads one JSON ExtenderArgs from r as encoding/json would
// (field names matched without regard to case, unknown fields skipped,
// null leaving a pointer nil), and nothing after it, but walks the
// tokens of Nodes.items and NodeNames one element at a time and stops
// at the element after the first maxNodes (maxNodes <= 0: no limit)
// with a *tooManyError. A request of 240,000 nodes thus costs the
// memory of maxNodes decoded nodes, not of 240,000
// (TestBodyOverNodeCapStopsEarly). Errors of a part of the request are
// *fieldError.
func decodeArgs(r io.Reader, maxNodes int) (*ExtenderArgs, error) {
	dec := json.NewDecoder(r)
	args := &ExtenderArgs{}
	tok, err := dec.Token()
	if err != nil {
		return nil, err // io.EOF: empty
	}
	switch tok {
	case nil: // null: nothing set
	case json.Delim('{'):
		for dec.More() {
			key, err := token(dec)
			if err != nil {
				return nil, err
			}
			k, _ := key.(string)
			switch {
			case strings.EqualFold(k, "Pod"):
				if err := decodeIn(dec, &args.Pod); err != nil {
					return nil, &fieldError{"Pod", err}
				}
			case strings.EqualFold(k, "Nodes"):
				err = decodeNodeList(dec, &args.Nodes, maxNodes)
			case strings.EqualFold(k, "NodeNames"):
				err = decodeNames(dec, &args.NodeNames, maxNodes)
			default:
				err = skip(dec)
			}
			if err != nil {
				return nil, err
			}
		}
		if _, err := token(dec); err != nil { // '}'
			return nil, err
		}
	default:
		return nil, &json.UnmarshalTypeError{Value: kind(tok), Type: reflect.TypeFor[ExtenderArgs](), Offset: dec.InputOffset()}
	}
	// One JSON value and nothing after it.
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return args, nil
	case err != nil:
		return nil, err
	}
	return nil, errors.New("more than one JSON value")
}

// decodeNodeList decodes a NodeList into *dst, its items one by one.
func decodeNodeList(dec *json.Decoder, dst **NodeList, maxNodes int) error {
	tok, err := token(dec)
	switch {
	case err != nil:
		return err
	case tok == nil:
		*dst = nil
		return nil
	case tok != json.Delim('{'):
		return &fieldError{"Nodes", &json.UnmarshalTypeError{Value: kind(tok), Type: reflect.TypeFor[NodeList](), Offset: dec.InputOffset()}}
	}
	if *dst == nil {
		*dst = &NodeList{}
	}
	l := *dst
	for dec.More() {
		key, err := token(dec)
		if err != nil {
			return err
		}
		k, _ := key.(string)
		switch {
		case strings.EqualFold(k, "items"):
			err = decodeItems(dec, l, maxNodes)
		case strings.EqualFold(k, "kind"):
			err = decodeIn(dec, &l.Kind)
		case strings.EqualFold(k, "apiVersion"):
			err = decodeIn(dec, &l.APIVersion)
		case strings.EqualFold(k, "metadata"):
			err = decodeIn(dec, &l.ListMeta)
		default:
			err = skip(dec)
		}
		if err != nil {
			var fe *fieldError
			if !errors.As(err, &fe) {
				err = &fieldError{"Nodes", err}
			}
			return err
		}
	}
	_, err = token(dec) // '}'
	return err
}

// decodeItems decodes the nodes of Nodes.items into l.Items.
func decodeItems(dec *json.Decoder, l *NodeList, maxNodes int) error {
	tok, err := token(dec)
	switch {
	case err != nil:
		return err
	case tok == nil:
		l.Items = nil
		return nil
	case tok != json.Delim('['):
		return &fieldError{"Nodes.items", &json.UnmarshalTypeError{Value: kind(tok), Type: reflect.TypeFor[[]Node](), Offset: dec.InputOffset()}}
	}
	l.Items = []Node{}
	for dec.More() {
		if maxNodes > 0 && len(l.Items) == maxNodes {
			return &fieldError{"Nodes.items", &tooManyError{what: "nodes", max: maxNodes}}
		}
		l.Items = append(l.Items, Node{})
		if err := decodeIn(dec, &l.Items[len(l.Items)-1]); err != nil {
			return &fieldError{"Nodes.items", err}
		}
	}
	_, err = token(dec) // ']'
	return err
}

// decodeNames decodes NodeNames into *dst, one name at a time.
func decodeNames(dec *json.Decoder, dst **[]string, maxNodes int) error {
	tok, err := token(dec)
	switch {
	case err != nil:
		return err
	case tok == nil:
		*dst = nil
		return nil
	case tok != json.Delim('['):
		return &fieldError{"NodeNames", &json.UnmarshalTypeError{Value: kind(tok), Type: reflect.TypeFor[[]string](), Offset: dec.InputOffset()}}
	}
	names := []string{}
	for dec.More() {
		if maxNodes > 0 && len(names) == maxNodes {
			return &fieldError{"NodeNames", &tooManyError{what: "node names", max: maxNodes}}
		}
		var s string
		if err := decodeIn(dec, &s); err != nil {
			return &fieldError{"NodeNames", err}
		}
		names = append(names, s)
	}
	if _, err := token(dec); err != nil { // ']'
		return err
	}
	*dst = &names
	return nil
}

// skip reads past one JSON value, token by token.
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := token(dec)
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// token is dec.Token inside a value, where the input must not end.
func token(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}

// decodeIn is dec.Decode inside a value, where the input must not end.
func decodeIn(dec *json.Decoder, v any) error {
	err := dec.Decode(v)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// kind names the JSON value a token starts, as json.UnmarshalTypeError
// does.
func kind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		if tok == json.Delim('[') {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "number"
}

// fieldError is an error of one part of the request, e.g. "Nodes.items".
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// tooManyError refuses a request with more nodes than the Core takes.
type tooManyError struct {
	what string
	max  int
}

func (e *tooManyError) Error() string {
	return fmt.Sprintf("more than %d %s, the most a request may have (the Core's MaxNodes); refused while reading", e.max, e.what)
}

// joinField joins a part of the request and a field within it.
func joinField(part, field string) string {
	if part == "body" {
		return field
	}
	return part + "." + field
}
