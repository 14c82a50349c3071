package dev.rdmarpc.codegen.tests;

import org.junit.jupiter.api.Test;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every class the plugin generated from this module's test protos (keywords as rpc names, deprecated rpcs, services
 * and message types, names that could shadow, proto2 groups, editions, the unnamed package...) compiles with
 * {@code -Xlint:all -Werror}, as a user's strict build compiles it: no warning at all. The message classes protoc
 * wrote are on the class path, already compiled by the build.
 */
class LintTest {
    private static final Path GENERATED = Path.of("target", "generated-test-sources", "protobuf");

    @Test
    void generatedServiceClassesCompileWithAllLintsAsErrors() throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(GENERATED)) {
            sources = files.filter(p -> p.getFileName().toString().endsWith("Rpc.java")).sorted().toList();
        }
        assertTrue(sources.size() >= 19, "the generated service classes: " + sources);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Path out = Files.createTempDirectory("lint-test");
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, null)) {
            List<String> options = List.of("-Xlint:all", "-Werror", "-proc:none", "--release", "25",
                    "-d", out.toString(), "-cp", BuildPaths.testClassPath());
            boolean compiled = javac.getTask(null, files, diagnostics, options, null,
                    files.getJavaFileObjectsFromPaths(sources)).call();
            String report = diagnostics.getDiagnostics().stream()
                    .map(d -> d.getKind() + " " + (d.getSource() == null ? "" : d.getSource().getName() + ":" + d.getLineNumber())
                            + " " + d.getMessage(null))
                    .collect(Collectors.joining("\n"));
            assertEquals(List.of(), diagnostics.getDiagnostics().stream().map(Diagnostic::getKind).toList(), report);
            assertTrue(compiled, report);
        } finally {
            try (Stream<Path> walk = Files.walk(out)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
