package dev.rdmarpc.codegen;

/** A problem with the input that stops generation; its message goes into the response's error field. */
final class CodeGenerationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CodeGenerationException(String message) {
        super(message);
    }
}
