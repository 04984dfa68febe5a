package dev.sluice.boot;

/** Unblocking callers and changing limits over HTTP with the default in-memory store. */
class InMemoryHttpOperationsTest extends HttpOperationsContract {
}
