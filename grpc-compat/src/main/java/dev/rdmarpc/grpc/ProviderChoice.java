package dev.rdmarpc.grpc;

import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Whether grpc's {@code Grpc.newChannelBuilder} / {@code Grpc.newServerBuilderForPort} should prefer rdmarpc over
 * other transports on the class path: the system property {@value #PROPERTY}, else the environment variable
 * {@value #ENVIRONMENT}, with the values {@code prefer}, {@code fallback} (the default) or {@code off}.
 */
enum ProviderChoice {
    /** Above grpc-netty (priority 5) and grpc-okhttp: rdmarpc is chosen whenever it is on the class path. */
    PREFER(10),
    /** Below grpc-netty and grpc-okhttp: rdmarpc is chosen only when no other transport is on the class path. */
    FALLBACK(1),
    /** Not offered to grpc at all. */
    OFF(0);

    /** The system property that chooses. */
    static final String PROPERTY = "rdmarpc.grpc.provider";
    /** The environment variable that chooses when the system property is not set. */
    static final String ENVIRONMENT = "RDMARPC_GRPC_PROVIDER";

    private final int priority;

    ProviderChoice(int priority) {
        this.priority = priority;
    }

    /** The priority grpc's registries sort providers by (higher first). */
    int priority() {
        return priority;
    }

    /** Whether the provider is offered to grpc. */
    boolean available() {
        return this != OFF;
    }

    private static final Logger logger = Logger.getLogger(ProviderChoice.class.getName());

    /**
     * The choice this JVM's system property or environment makes; an unknown value is logged and taken as FALLBACK
     * (grpc loads providers through {@code ServiceLoader}, where a throwing constructor would break every transport).
     */
    static ProviderChoice current() {
        String value = System.getProperty(PROPERTY);
        if (value == null) {
            value = System.getenv(ENVIRONMENT);
        }
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            logger.log(Level.WARNING, e.getMessage() + "; using fallback");
            return FALLBACK;
        }
    }

    /**
     * The choice a setting names ({@code null} or blank: FALLBACK).
     *
     * @throws IllegalArgumentException for any other value, naming the accepted ones
     */
    static ProviderChoice parse(String value) {
        if (value == null || value.isBlank()) {
            return FALLBACK;
        }
        return switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "prefer" -> PREFER;
            case "fallback" -> FALLBACK;
            case "off" -> OFF;
            default -> throw new IllegalArgumentException(PROPERTY + " / " + ENVIRONMENT + " is '" + value
                    + "'; expected prefer, fallback or off");
        };
    }
}
