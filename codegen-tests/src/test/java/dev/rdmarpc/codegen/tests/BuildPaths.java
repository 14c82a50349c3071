package dev.rdmarpc.codegen.tests;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where the build put what tests run again: the test class path, and the protoc executable the protobuf plugin fetched. */
final class BuildPaths {
    /** The protobuf Maven plugin's working directory, where it keeps the protoc it runs. */
    private static final Path PROTOBUF_PLUGIN_DIR = Path.of("target", "protobuf-maven-plugin");

    private BuildPaths() {
    }

    /** The test class path as Surefire hands it over (the JVM's own may be a manifest-only jar). */
    static String testClassPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        String path = surefire == null || surefire.isBlank() ? System.getProperty("java.class.path") : surefire;
        assertTrue(path.contains("test-classes"), "the test class path holds the compiled messages: " + path);
        return String.join(File.pathSeparator, path.split(File.pathSeparator));
    }

    /** The protoc executable the build ran (the same version, fetched by the protobuf Maven plugin). */
    static Path protoc() throws IOException {
        try (Stream<Path> files = Files.walk(PROTOBUF_PLUGIN_DIR)) {
            return files.filter(p -> p.getFileName().toString().matches("protoc-[0-9a-f]+\\.exe") && Files.isExecutable(p))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no protoc executable under " + PROTOBUF_PLUGIN_DIR.toAbsolutePath()
                            + ": the protobuf Maven plugin keeps it elsewhere now"));
        }
    }
}
