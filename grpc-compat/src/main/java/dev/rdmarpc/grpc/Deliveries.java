package dev.rdmarpc.grpc;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Where rdmarpc runs the callbacks grpc-compat turns into grpc stream-listener calls.
 *
 * <p>grpc expects a transport to call its stream listeners with no transport lock held, and to deliver a stream's
 * events one at a time and in order. rdmarpc core does both for every executor (it starts a call's callbacks only
 * after releasing the call's lock, one drain at a time), so calls use a direct executor: a callback runs on the
 * thread that made it ready (the connection's I/O thread for frames, as grpc-netty delivers on its event loop),
 * and grpc itself hands application code to the application's executor.
 */
final class Deliveries {
    /** The executor grpc-compat gives core for every call: runs callbacks where they become ready. */
    static final Executor EXECUTOR = Runnable::run;

    private static final Executor POOL = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("rdmarpc-grpc-transport-", 1).daemon().factory());

    private Deliveries() {
    }

    /** For transport events that must not run on the caller's thread (grpc forbids calling back from start()). */
    static Executor pool() {
        return POOL;
    }
}
