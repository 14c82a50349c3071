package dev.rdmarpc.core.spi;

/**
 * Why a client transport closed a connection before its HELLO exchange: the server answered in another protocol that
 * the transport also speaks, and the transport's next connection to the same address will use it. Core dials again
 * at once, under the same connection attempt, instead of failing the calls waiting for it.
 */
public final class ProtocolSwitchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolSwitchException(String message) {
        super(message, null, false, false);
    }
}
