package leakcheck

// Patience is Wait's patience, which TestWait shortens.
var Patience = &patience
