package env

// SkipRefreshes exposes nextRefresh to the external tests.
var SkipRefreshes = nextRefresh
