//! Report cards: figures checked by hand, the printed card, and what one request may cost.

mod cards;
mod costs;
mod pdf;
mod print;
