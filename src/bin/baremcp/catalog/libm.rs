//! The calculator's transcendental functions (`ln log10 sin cos tan` and `^`), and where they
//! come from.
//!
//! On glibc they live in `libm.so.6`. Linking it puts it in every start: the dynamic loader
//! maps and relocates it before `main`, about 0.1 ms and 350 KiB of resident memory, for a
//! tool most sessions never call. So on glibc the library is opened on first use instead,
//! and the very same functions are called through it (results are identical to the bit).
//! Everywhere else (musl links them statically; other systems) they are `f64`'s own methods.

pub use imp::{Binary, Unary};

/// The functions, once they are at hand.
pub struct Libm {
    pub ln: Unary,
    pub log10: Unary,
    pub sin: Unary,
    pub cos: Unary,
    pub tan: Unary,
    pub pow: Binary,
}

/// The functions, or why they cannot be had (only when glibc's `libm.so.6` cannot be opened).
/// Found once per process; an opened library is never closed, so the pointers stay valid.
pub fn libm() -> Result<&'static Libm, &'static str> {
    static LIBM: std::sync::OnceLock<Option<Libm>> = std::sync::OnceLock::new();
    LIBM.get_or_init(imp::open).as_ref().ok_or("the math library libm.so.6 could not be loaded")
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    use super::Libm;

    pub type Unary = fn(f64) -> f64;
    pub type Binary = fn(f64, f64) -> f64;

    pub fn open() -> Option<Libm> {
        Some(Libm {
            ln: f64::ln,
            log10: f64::log10,
            sin: f64::sin,
            cos: f64::cos,
            tan: f64::tan,
            pow: f64::powf,
        })
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use std::ffi::{CStr, c_char, c_int, c_void};

    use super::Libm;

    pub type Unary = extern "C" fn(f64) -> f64;
    pub type Binary = extern "C" fn(f64, f64) -> f64;

    // In libc.so.6 itself since glibc 2.34, which std's own symbols already require.
    unsafe extern "C" {
        fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    }
    const RTLD_NOW: c_int = 2;

    pub fn open() -> Option<Libm> {
        // SAFETY: dlopen and dlsym get NUL-terminated names. Each symbol is glibc's C
        // function of that name, whose signature is exactly the type it is turned into:
        // `double f(double)`, or `double pow(double, double)`, with the C ABI.
        unsafe {
            let handle = dlopen(c"libm.so.6".as_ptr(), RTLD_NOW);
            if handle.is_null() {
                return None;
            }
            let find = |name: &CStr| {
                let f = dlsym(handle, name.as_ptr());
                (!f.is_null()).then_some(f)
            };
            let unary = |name| find(name).map(|f| std::mem::transmute::<*mut c_void, Unary>(f));
            Some(Libm {
                ln: unary(c"log")?,
                log10: unary(c"log10")?,
                sin: unary(c"sin")?,
                cos: unary(c"cos")?,
                tan: unary(c"tan")?,
                pow: std::mem::transmute::<*mut c_void, Binary>(find(c"pow")?),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    /// Each function is bound to the right symbol and gives what `f64`'s own method gives,
    /// bit for bit (on glibc the test binary links libm; the server opens it).
    #[test]
    fn the_functions_are_f64s_own() {
        let m = super::libm().unwrap();
        let unary = [
            (m.ln, f64::ln as fn(f64) -> f64),
            (m.log10, f64::log10),
            (m.sin, f64::sin),
            (m.cos, f64::cos),
            (m.tan, f64::tan),
        ];
        let inputs = [
            0.0,
            0.5,
            1.0,
            std::f64::consts::E,
            2.0,
            10.0,
            1e-300,
            123456.789,
            1e22,
            -3.25,
            f64::INFINITY,
        ];
        // Behind `black_box`, so that `std`'s side is computed when the test runs: an
        // optimized build folds `powf` of constants itself, and its NaN's sign differs.
        for x in inputs.map(std::hint::black_box) {
            for (i, (ours, std)) in unary.iter().enumerate() {
                assert_eq!(ours(x).to_bits(), std(x).to_bits(), "function {i} of {x}");
            }
            for y in inputs.map(std::hint::black_box) {
                assert_eq!((m.pow)(x, y).to_bits(), x.powf(y).to_bits(), "{x} ^ {y}");
            }
        }
    }
}
