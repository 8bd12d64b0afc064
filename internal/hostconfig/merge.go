package hostconfig

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Source names where a value came from: "repo", "user" or
// "user:projects[N]", with the file and line.
type Source struct {
	Layer string `json:"layer"`
	File  string `json:"file"`
	Line  int    `json:"line"`
}

// String implements fmt.Stringer: "repo /p/.aos/config.yaml:3".
func (s Source) String() string { return fmt.Sprintf("%s %s:%d", s.Layer, s.File, s.Line) }

// layerInput is one layer to merge, with where its fields are.
type layerInput struct {
	name   string
	l      *Layer
	p      *parsed
	prefix string // the layer's path in its file
}

// mergeLayers merges layers in order, later winning: a present (non-nil)
// scalar replaces, a map merges by key, a slice replaces whole. It returns
// the merged layer and the source of every value present in it, by dotted
// field path.
func mergeLayers(in []layerInput) (Layer, map[string]Source) {
	var out Layer
	src := map[string]Source{}
	for _, li := range in {
		mergeValue(reflect.ValueOf(&out).Elem(), reflect.ValueOf(li.l).Elem(), "", func(path string) {
			src[path] = Source{Layer: li.name, File: li.p.file, Line: li.p.lineOf(join(li.prefix, path))}
		}, src)
	}
	return out, src
}

func mergeValue(dst, s reflect.Value, path string, mark func(string), src map[string]Source) {
	switch s.Kind() {
	case reflect.Struct:
		t := s.Type()
		for i := range t.NumField() {
			tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
			mergeValue(dst.Field(i), s.Field(i), join(path, tag), mark, src)
		}
	case reflect.Pointer:
		if !s.IsNil() {
			v := reflect.New(s.Type().Elem())
			v.Elem().Set(s.Elem())
			dst.Set(v)
			mark(path)
		}
	case reflect.Slice:
		if !s.IsNil() {
			dst.Set(reflect.AppendSlice(reflect.MakeSlice(s.Type(), 0, s.Len()), s))
			for k := range src {
				if strings.HasPrefix(k, path+"[") {
					delete(src, k)
				}
			}
			mark(path)
		}
	case reflect.Map:
		if s.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(s.Type()))
		}
		for _, k := range s.MapKeys() {
			dst.SetMapIndex(k, s.MapIndex(k))
			mark(join(path, fmt.Sprint(k.Interface())))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func keys(m map[string]bool) string {
	return strings.Join(sortedKeys(m), ", ")
}
