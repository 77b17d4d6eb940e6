//! Print the layout probe of each data file given on the command line.
fn main() {
    for a in std::env::args().skip(1) {
        match dlmdb::probe_layout(std::path::Path::new(&a)) {
            Ok(p) => println!("{a}: {:?} {p:?}", p.verdict()),
            Err(e) => println!("{a}: error {e}"),
        }
    }
}
