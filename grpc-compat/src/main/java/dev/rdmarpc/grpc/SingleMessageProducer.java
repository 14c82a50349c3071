package dev.rdmarpc.grpc;

import io.grpc.internal.StreamListener;

import java.io.InputStream;

/** One received message, handed to a grpc stream listener. */
final class SingleMessageProducer implements StreamListener.MessageProducer {
    private InputStream message;

    SingleMessageProducer(InputStream message) {
        this.message = message;
    }

    @Override
    public InputStream next() {
        InputStream m = message;
        message = null;
        return m;
    }
}
