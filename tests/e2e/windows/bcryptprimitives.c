/* A stand-in for Windows' bcryptprimitives.dll, for running livenote's Windows build under
 * Wine 8 only (tests/e2e/windows/install.sh builds it into the test prefix; real Windows has
 * the DLL). Rust's std (1.78+) imports ProcessPrng from it, which Wine 8 lacks: without this,
 * every binary exits at start with status 53. RtlGenRandom (SystemFunction036 in advapi32)
 * gives the same kind of bytes; it takes a ULONG, so large buffers go in chunks. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
