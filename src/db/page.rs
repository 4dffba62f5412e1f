//! One page of a platform table (users, API keys, schools): the rows a list matches, oldest
//! first, and how many match in all. Each table says only which rows match a search
//! (`matching`); counting, ordering and the page are here, once.

use diesel::{
    Expression, PgConnection, QueryResult, RunQueryDsl,
    dsl::{Count, count_star},
    query_dsl::{
        LoadQuery, QueryDsl,
        methods::{LimitDsl, OffsetDsl, OrderDsl, SelectDsl},
    },
};

/// Which page of a list: `limit` rows from `offset`.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub offset: i64,
    pub limit: i64,
}

/// The rows of `matching()` (a boxed select of the rows a list matches, its columns
/// selected) from `span`, in the order `oldest_first` (`(created_at, id)`), and the count
/// of all of them. `matching` is called twice: the count has no order.
pub fn page<Q, O, R>(
    conn: &mut PgConnection,
    matching: impl Fn() -> Q,
    oldest_first: O,
    span: Span,
) -> QueryResult<(i64, Vec<R>)>
where
    O: Expression,
    Q: QueryDsl
        + RunQueryDsl<PgConnection>
        + SelectDsl<count_star>
        + OrderDsl<O, Output = Q>
        + OffsetDsl<Output = Q>
        + LimitDsl<Output = Q>
        + for<'q> LoadQuery<'q, PgConnection, R>,
    Count<Q>: RunQueryDsl<PgConnection> + for<'q> LoadQuery<'q, PgConnection, i64>,
{
    let count = QueryDsl::count(matching()).get_result(conn)?;
    let ordered = OrderDsl::order(matching(), oldest_first);
    let rows = LimitDsl::limit(OffsetDsl::offset(ordered, span.offset), span.limit);
    Ok((count, rows.load(conn)?))
}
