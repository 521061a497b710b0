package main

import "testing"

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:50051": true, "localhost:50051": true, "LOCALHOST:1": true, "[::1]:50051": true, ":50051": true,
		"127.8.9.1:1": true, "dns:///localhost:50051": true, "passthrough:///127.0.0.1:1": true, "localhost": true,
		"0.0.0.0:50051": false, "[::]:1": false, "10.0.0.1:50051": false, "sched.example.com:443": false,
		"dns:///sched.example.com:443": false, "localhost.example.com:1": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
