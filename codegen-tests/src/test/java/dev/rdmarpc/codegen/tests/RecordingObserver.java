package dev.rdmarpc.codegen.tests;

import dev.rdmarpc.core.StreamObserver;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A response observer that records values and completes a future with them, or with the error. */
final class RecordingObserver<V> implements StreamObserver<V> {
    private final List<V> values = new CopyOnWriteArrayList<>();
    private final CompletableFuture<List<V>> done = new CompletableFuture<>();

    @Override
    public void onNext(V value) {
        values.add(value);
    }

    @Override
    public void onError(Throwable t) {
        done.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
        done.complete(List.copyOf(values));
    }

    /** Waits for completion and returns every value; throws the call's error as the cause of an ExecutionException. */
    List<V> await() throws InterruptedException, ExecutionException, TimeoutException {
        return done.get(60, TimeUnit.SECONDS);
    }

    /** Waits for the call to fail and returns its error. */
    Throwable awaitError() throws InterruptedException, TimeoutException {
        try {
            List<V> v = done.get(60, TimeUnit.SECONDS);
            throw new AssertionError("expected the call to fail, it completed with " + v);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }
}
