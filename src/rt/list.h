// SPDX-License-Identifier: GPL-2.0
// Intrusive doubly linked lists. An element derives from ListLink<Tag> once
// per list it can be on (the tag tells the lists apart), so linking never
// allocates and an element knows whether it is linked.
#pragma once

#include "rt/env.h"
#include "rt/types.h"

namespace rt {

struct DefaultListTag;

template <class Tag = DefaultListTag>
class ListLink {
public:
    ListLink() = default;
    ListLink(const ListLink&) = delete;
    ListLink& operator=(const ListLink&) = delete;
    // Going away while linked is a bug; report it and unlink, so that the
    // list is not left pointing at freed memory.
    ~ListLink() {
        if (linked()) {
            rtrs_env_warn("rt::ListLink destroyed while still on a list");
            unlink();
        }
    }

    bool linked() const { return next_ != this; }

private:
    template <class T, class G> friend class List;

    void insert_between(ListLink* prev, ListLink* next) {
        prev_ = prev;
        next_ = next;
        prev->next_ = this;
        next->prev_ = this;
    }
    void unlink() {
        prev_->next_ = next_;
        next_->prev_ = prev_;
        prev_ = next_ = this;
    }

    ListLink* prev_ = this;
    ListLink* next_ = this;
};

template <class T, class Tag = DefaultListTag>
class List {
    using Link = ListLink<Tag>;

public:
    List() = default;
    List(const List&) = delete;
    List& operator=(const List&) = delete;
    ~List() {
        if (!empty()) {
            rtrs_env_warn("rt::List destroyed while not empty");
            head_.unlink();  // one report for one mistake
        }
    }

    bool empty() const { return !head_.linked(); }
    usize size() const {
        usize n = 0;
        for (const Link* l = head_.next_; l != &head_; l = l->next_) ++n;
        return n;
    }

    // An element already on a list is reported and left where it is.
    void push_back(T& item) {
        if (Link* l = link_checked(item)) l->insert_between(head_.prev_, &head_);
    }
    void push_front(T& item) {
        if (Link* l = link_checked(item)) l->insert_between(&head_, head_.next_);
    }

    // Unlinks `item`, which must be on this list.
    void remove(T& item) {
        Link& l = item;
        if (!l.linked()) {
            rtrs_env_warn("rt::List::remove of an unlinked element");
            return;
        }
        l.unlink();
    }

    T* front() const { return empty() ? nullptr : elem(head_.next_); }
    T* back() const { return empty() ? nullptr : elem(head_.prev_); }

    T* pop_front() {
        T* t = front();
        if (t) static_cast<Link&>(*t).unlink();
        return t;
    }

    bool contains(const T& item) const {
        for (const Link* l = head_.next_; l != &head_; l = l->next_)
            if (l == static_cast<const Link*>(&item)) return true;
        return false;
    }

    class Iterator {
    public:
        explicit Iterator(Link* l) : l_(l) {}
        T& operator*() const { return *elem(l_); }
        T* operator->() const { return elem(l_); }
        // Reads the successor before the caller can unlink the current one
        // only if the caller uses take_next(); plain ++ is for unchanging lists.
        Iterator& operator++() {
            l_ = l_->next_;
            return *this;
        }
        bool operator!=(const Iterator& o) const { return l_ != o.l_; }
        bool operator==(const Iterator& o) const { return l_ == o.l_; }

    private:
        Link* l_;
    };

    Iterator begin() { return Iterator(head_.next_); }
    Iterator end() { return Iterator(&head_); }

    // Calls fn(T&) on each element; fn may unlink (or free) the element it
    // was given, but no other.
    template <class Fn>
    void for_each_safe(Fn&& fn) {
        for (Link *l = head_.next_, *next = l->next_; l != &head_; l = next, next = l->next_)
            fn(*elem(l));
    }

private:
    static T* elem(const Link* l) { return static_cast<T*>(const_cast<Link*>(l)); }

    static Link* link_checked(T& item) {
        Link* l = &item;
        if (l->linked()) {
            rtrs_env_warn("rt::List: element is already on a list");
            return nullptr;
        }
        return l;
    }

    Link head_;
};

}  // namespace rt
