package server

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/store"
)

// pushOnly reports whether the request came with a push-only token.
func pushOnly(c echo.Context) bool {
	u, ok := principal(c)
	return ok && u.TokenScope == store.TokenPush
}

// mayPush is the middleware of the push routes: an admin, or a push-only
// token.
func (s *Server) mayPush(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if pushOnly(c) {
			return h(c)
		}
		return s.allow(c, auth.Admin, h)
	}
}

// pushStatus says what the host has of a pushed pack.
func (s *Server) pushStatus(c echo.Context) error {
	st, err := s.receiver.Status(c.Request().Context(), c.Param("digest"))
	if err != nil {
		return pushError(c, err)
	}
	return c.JSON(http.StatusOK, st)
}

// pushReceive takes bytes of a pushed pack (?size=&offset=, gzip allowed)
// and, once it has them all, stores and indexes the pack.
func (s *Server) pushReceive(c echo.Context) error {
	size, err1 := strconv.ParseInt(c.QueryParam("size"), 10, 64)
	offset, err2 := strconv.ParseInt(c.QueryParam("offset"), 10, 64)
	if err1 != nil || err2 != nil || offset < 0 {
		return apiError(c, http.StatusBadRequest, "give ?size=BYTES&offset=BYTES: the pack's size and where this chunk starts", nil)
	}
	var body io.Reader = c.Request().Body
	switch enc := c.Request().Header.Get(echo.HeaderContentEncoding); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return apiError(c, http.StatusBadRequest, "Content-Encoding gzip: "+err.Error(), nil)
		}
		defer zr.Close()
		body = zr
	default:
		return apiError(c, http.StatusUnsupportedMediaType, "Content-Encoding "+strconv.Quote(enc)+": send gzip or nothing", nil)
	}
	st, err := s.receiver.Receive(c.Request().Context(), c.Param("digest"), size, offset, body)
	if err != nil {
		return pushError(c, err)
	}
	if st.Now {
		who := s.actor(c, "")
		s.auditAs(c, who, "push", st.Digest, strconv.Itoa(st.Runs)+" runs, "+strconv.Itoa(len(st.Problems))+" problems")
	}
	return c.JSON(http.StatusOK, st)
}

// pushError answers a push's error with its status and words.
func pushError(c echo.Context, err error) error {
	var off *push.OffsetError
	switch {
	case errors.As(err, &off):
		return apiError(c, http.StatusConflict, err.Error(), map[string]string{"have": strconv.FormatInt(off.Have, 10)})
	case errors.Is(err, push.ErrDigest), errors.Is(err, push.ErrSize):
		return apiError(c, http.StatusBadRequest, err.Error(), nil)
	case errors.Is(err, push.ErrTooLarge):
		return apiError(c, http.StatusRequestEntityTooLarge, err.Error(), nil)
	case errors.Is(err, push.ErrBusy):
		return apiError(c, http.StatusConflict, err.Error(), nil)
	case errors.Is(err, push.ErrMismatch), errors.Is(err, push.ErrNotAPack):
		return apiError(c, http.StatusUnprocessableEntity, err.Error(), nil)
	}
	return err
}
