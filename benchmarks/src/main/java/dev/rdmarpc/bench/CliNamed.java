package dev.rdmarpc.bench;

import java.util.Locale;

/**
 * An enum named on the command line and in results by its constant, lower case with '-' for '_'
 * ({@code SERVER_STREAM}: "server-stream"); its {@code toString()} returns that name, which picocli's
 * enum conversion (case-insensitive) accepts.
 */
interface CliNamed {

    /** The constant's name (implemented by every enum). */
    String name();

    /** The name used on the command line and in results. */
    default String cliName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
