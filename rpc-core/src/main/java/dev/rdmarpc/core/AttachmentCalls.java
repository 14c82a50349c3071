package dev.rdmarpc.core;

/**
 * Adapts calls so that the observer-style API ({@link ClientCalls}, {@link ServerCalls}, generated stubs) sends and
 * receives {@link WithAttachment} values: a message with the attachment beside it.
 * <pre>{@code
 * ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(METHOD, options)),
 *         WithAttachment.of(request, segment, onReleased), responseObserver);
 * serviceBuilder.addMethod(METHOD, AttachmentCalls.server(ServerCalls.asyncUnaryCall((req, out) -> ...)));
 * }</pre>
 */
public final class AttachmentCalls {
    private AttachmentCalls() {
    }

    /** A client call whose messages carry their attachments; the adapted call's own messages are plain. */
    public static <ReqT, RespT> ClientCall<WithAttachment<ReqT>, WithAttachment<RespT>> client(ClientCall<ReqT, RespT> call) {
        return new ClientCall<>() {
            @Override
            public void start(Listener<WithAttachment<RespT>> listener, Metadata headers) {
                call.start(new Listener<>() {
                    @Override
                    public void onHeaders(Metadata h) {
                        listener.onHeaders(h);
                    }

                    @Override
                    public void onMessage(RespT message) {
                        listener.onMessage(WithAttachment.of(message));
                    }

                    @Override
                    public void onMessage(RespT message, Attachment attachment) {
                        listener.onMessage(new WithAttachment<>(message, attachment));
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        listener.onClose(status, trailers);
                    }

                    @Override
                    public void onReady() {
                        listener.onReady();
                    }
                }, headers);
            }

            @Override
            public void request(int n) {
                call.request(n);
            }

            @Override
            public void cancel(String message, Throwable cause) {
                call.cancel(message, cause);
            }

            @Override
            public void halfClose() {
                call.halfClose();
            }

            @Override
            public void sendMessage(WithAttachment<ReqT> message) {
                Attachment a = message.attachment();
                if (a == null) {
                    call.sendMessage(message.message());
                } else {
                    call.sendMessage(message.message(), a.segment(), a::release);
                }
            }

            @Override
            public boolean isReady() {
                return call.isReady();
            }

            @Override
            public String toString() {
                return "AttachmentCalls.client{" + call + "}";
            }
        };
    }

    /**
     * A handler for the method's plain call that runs {@code handler} (e.g. from {@link ServerCalls}) on a call whose
     * messages carry their attachments.
     */
    public static <ReqT, RespT> ServerCallHandler<ReqT, RespT> server(
            ServerCallHandler<WithAttachment<ReqT>, WithAttachment<RespT>> handler) {
        return (call, headers) -> {
            ServerCall.Listener<WithAttachment<ReqT>> inner = handler.startCall(new Attaching<>(call), headers);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(ReqT message) {
                    inner.onMessage(WithAttachment.of(message));
                }

                @Override
                public void onMessage(ReqT message, Attachment attachment) {
                    inner.onMessage(new WithAttachment<>(message, attachment));
                }

                @Override
                public void onHalfClose() {
                    inner.onHalfClose();
                }

                @Override
                public void onCancel() {
                    inner.onCancel();
                }

                @Override
                public void onComplete() {
                    inner.onComplete();
                }

                @Override
                public void onReady() {
                    inner.onReady();
                }
            };
        };
    }

    /** An observer of plain values that passes each on to {@code observer} without an attachment. */
    public static <T> StreamObserver<T> plain(StreamObserver<WithAttachment<T>> observer) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                observer.onNext(WithAttachment.of(value));
            }

            @Override
            public void onError(Throwable t) {
                observer.onError(t);
            }

            @Override
            public void onCompleted() {
                observer.onCompleted();
            }
        };
    }

    /** An observer that releases each value's attachment and passes the message on to {@code observer}. */
    public static <T> StreamObserver<WithAttachment<T>> withoutAttachments(StreamObserver<T> observer) {
        return new StreamObserver<>() {
            @Override
            public void onNext(WithAttachment<T> value) {
                value.release();
                observer.onNext(value.message());
            }

            @Override
            public void onError(Throwable t) {
                observer.onError(t);
            }

            @Override
            public void onCompleted() {
                observer.onCompleted();
            }
        };
    }

    /** A server call sending {@link WithAttachment} responses through the plain call. */
    private static final class Attaching<ReqT, RespT> extends ServerCall<WithAttachment<ReqT>, WithAttachment<RespT>> {
        private final ServerCall<ReqT, RespT> call;

        Attaching(ServerCall<ReqT, RespT> call) {
            this.call = call;
        }

        @Override
        public void request(int n) {
            call.request(n);
        }

        @Override
        public void sendHeaders(Metadata headers) {
            call.sendHeaders(headers);
        }

        @Override
        public void sendMessage(WithAttachment<RespT> message) {
            Attachment a = message.attachment();
            if (a == null) {
                call.sendMessage(message.message());
            } else {
                call.sendMessage(message.message(), a.segment(), a::release);
            }
        }

        @Override
        public void close(Status status, Metadata trailers) {
            call.close(status, trailers);
        }

        @Override
        public boolean isCancelled() {
            return call.isCancelled();
        }

        @Override
        public boolean isReady() {
            return call.isReady();
        }

        @Override
        public Deadline getDeadline() {
            return call.getDeadline();
        }

        /** The plain method's descriptor: its marshallers read and write the messages without their attachments. */
        @Override
        @SuppressWarnings("unchecked")
        public MethodDescriptor<WithAttachment<ReqT>, WithAttachment<RespT>> getMethodDescriptor() {
            return (MethodDescriptor<WithAttachment<ReqT>, WithAttachment<RespT>>) (MethodDescriptor<?, ?>) call.getMethodDescriptor();
        }

        @Override
        public String getPeer() {
            return call.getPeer();
        }

        @Override
        public String getAuthority() {
            return call.getAuthority();
        }

        @Override
        public String getTransportName() {
            return call.getTransportName();
        }

        @Override
        public PeerConnection getConnection() {
            return call.getConnection();
        }

        @Override
        public javax.net.ssl.SSLSession getSslSession() {
            return call.getSslSession();
        }
    }
}
