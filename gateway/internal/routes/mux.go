package routes

import "net/http"

// Mux is what registering a group's paths needs of an http.ServeMux. The
// gateway passes its ServeMux; a test passes a recorder to list the route
// table (docs/interface.md must name every pattern).
type Mux interface {
	Handle(pattern string, handler http.Handler)
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}
