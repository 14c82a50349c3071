package dev.rdmarpc.core;

/** Receives a stream of values, then exactly one of {@link #onError} or {@link #onCompleted}. */
public interface StreamObserver<V> {
    void onNext(V value);

    void onError(Throwable t);

    void onCompleted();
}
